#ifndef NAVD_CLIBPQ_SHIM_H
#define NAVD_CLIBPQ_SHIM_H

#include <libpq-fe.h>

#endif
