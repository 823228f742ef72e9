#ifndef NAVD_CLIBYAML_SHIM_H
#define NAVD_CLIBYAML_SHIM_H

#include <yaml.h>

#endif
