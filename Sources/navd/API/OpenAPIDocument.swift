// Generated from openapi.yaml by scripts/embed-openapi.py (`make openapi`); do not edit.
/// The API contract, served at `/openapi.yaml`.
enum OpenAPIDocument {
    static let yaml = #"""
# The HTTP contract of navd (DESIGN §4). The daemon serves this file at /openapi.yaml and the
# tests check every response it sends against it: change the daemon and this file together.
openapi: 3.1.0
info:
  title: navd
  version: 0.1.0
  summary: A navigation daemon that owns the screen stack of thin clients.
  description: |
    Each session hosts one SceneSequence: a stage (the screen stack of one user's app) driven by a
    navigation graph (the app's scenes and named links). Clients send intents (a deep-link path, a
    named transition, exit/back, a parameter change, a state patch) and get back the new stage, its
    canonical path, its version and the ordered lifecycle events.

    Conventions that hold for every operation:

    - Requests and answers are `application/json`. Every error is `application/problem+json`
      (RFC 9457, schema `Problem`) with a stable `code`; its `type` is `urn:navd:problem:<code>`.
      An `internal` error never carries internals.
    - Every answer carries `X-Request-Id`. (Requests the HTTP layer rejects before they reach
      navd — a request line or header that is not HTTP/1.1, a URL or header block too long to
      buffer — are answered by libmicrohttpd itself with a bare 400, 414 or 431 and no problem
      document.)
    - An unknown route answers 404 `not_found`; a known route with another method answers 405
      `method_not_allowed` with an `Allow` header; a body over the limit answers 413
      `payload_too_large`; a body of another media type answers 415 `unsupported_media_type`;
      a body that is not JSON answers 400 `malformed_json`; a body, query or header of the wrong
      shape (whatever the operation's schemas forbid: a missing or unknown member, a wrong type,
      `null` where a value is expected, a number out of range or with a fraction where an integer
      is expected) answers 400 `invalid_request` with `param` naming the member, query parameter
      or header at fault. Bad input changes nothing.
    - Session routes (`/v1/sessions/{id}…`) need `Authorization: Bearer <token>` with the token
      returned when the session was created; the admin token is accepted there too. A missing
      token answers 401 `unauthorized` with `WWW-Authenticate: Bearer`; a wrong token — another
      session's, or any token for a session that does not exist or has expired — answers the same
      401 with `WWW-Authenticate: Bearer error="invalid_token"` (RFC 6750 §3.1): existence is never
      revealed. Only the admin token learns 404 `session_not_found` for an unknown session.
    - Every answer about a session carries `ETag: "<version>"`. Mutations and `DELETE` accept
      `If-Match` (RFC 9110 §13.1.1): `*` or a list of entity tags, compared strongly; a value none
      of whose tags is the current version (a weak tag never is) answers 412 `version_conflict`
      and changes nothing.
    - POSTs accept `Idempotency-Key` (1 to 200 printable ASCII characters): a retry with the same key, route,
      `If-Match` and body (compared as parsed JSON, not bytes) gets the first answer again; the
      same key with any of those different answers 422 `idempotency_key_reused`.
    - A refused intent changes nothing and emits nothing. An intent that changes nothing (for
      example navigating to the current path) answers 200 with the same version and no events.
servers:
  - url: http://127.0.0.1:8080
tags:
  - name: sessions
    description: Create, read and end sessions.
  - name: navigation
    description: Intents that change a session's stage, and its event log.
  - name: graphs
    description: Navigation graphs, versioned.
  - name: operations
    description: Health, readiness, metrics and this document.

paths:
  /v1/sessions:
    post:
      operationId: createSession
      tags: [sessions]
      summary: Start a session
      description: |
        Starts a session on a graph (default: the daemon's default graph) at a start path
        (default: the graph's `start`), with a session context that `requires` and `inject` read.
        The answer carries the opening transition's events and the session's `token`, which is
        shown only here. The context may be at most `--max-context` bytes of JSON (default 4096);
        a larger one is 400 `invalid_request` with `param: "context"`.

        No authentication, unless the daemon runs with `--backend-token` (the production
        setting): then this needs that token or the admin token. Without one: 401
        `unauthorized` with `WWW-Authenticate: Bearer`; with another token: 401 `unauthorized`
        with `WWW-Authenticate: Bearer error="invalid_token"`.
      security:
        - {}
        - backendToken: []
        - adminToken: []
      parameters:
        - $ref: '#/components/parameters/IdempotencyKey'
      requestBody:
        required: false
        content:
          application/json:
            schema:
              $ref: '#/components/schemas/CreateSessionRequest'
            examples:
              default:
                summary: The default graph at its start path
                value: {}
              deepLink:
                summary: Start inside a tab, with a user in the context
                value:
                  graph: news
                  start: "/top/home#profile"
                  context: {"user": "u1", "locale": "ja"}
      responses:
        '201':
          description: The session was created.
          headers:
            X-Request-Id:
              $ref: '#/components/headers/X-Request-Id'
            ETag:
              $ref: '#/components/headers/ETag'
            Idempotent-Replayed:
              $ref: '#/components/headers/Idempotent-Replayed'
            Location:
              $ref: '#/components/headers/Location'
          content:
            application/json:
              schema:
                $ref: '#/components/schemas/CreatedSession'
              examples:
                default:
                  summary: A new session on the news graph at /top
                  value:
                    id: "7f3c9a2e5b1d4c6f8a0e2b4d6f8a1c3e"
                    graph: {"name": "news", "version": 1}
                    version: 1
                    path: "/top"
                    screens:
                      - {"id": "e1", "scene": "top", "segue": "/", "container": "navigation", "params": {}, "deps": {}, "state": {}}
                    context: {}
                    events:
                      - {"seq": 1, "type": "transitionStart", "screen": null, "scene": null, "transition": 1, "from": "", "to": "/top"}
                      - {"seq": 2, "type": "awake", "screen": "e1", "scene": "top", "transition": 1}
                      - {"seq": 3, "type": "willAppear", "screen": "e1", "scene": "top", "transition": 1}
                      - {"seq": 4, "type": "didAppear", "screen": "e1", "scene": "top", "transition": 1}
                      - {"seq": 5, "type": "transitionEnd", "screen": null, "scene": null, "transition": 1, "from": "", "to": "/top"}
                    token: q7Vh2XcN9pLw3RtY8bKm5ZsD1fGa6EuJ0oTi4nHxWyA
          links:
            getSession:
              operationId: getSession
              description: 'Read the new session.'
              parameters:
                path.id: '$response.body#/id'
                header.Authorization: 'Bearer {$response.body#/token}'
            deleteSession:
              operationId: deleteSession
              description: 'End the new session.'
              parameters:
                path.id: '$response.body#/id'
                header.Authorization: 'Bearer {$response.body#/token}'
            navigate:
              operationId: navigate
              description: 'Navigate the new session.'
              parameters:
                path.id: '$response.body#/id'
                header.Authorization: 'Bearer {$response.body#/token}'
            applyTransition:
              operationId: applyTransition
              description: 'Apply a link on the new session.'
              parameters:
                path.id: '$response.body#/id'
                header.Authorization: 'Bearer {$response.body#/token}'
            exitScene:
              operationId: exitScene
              description: 'Exit the new session''s top screen.'
              parameters:
                path.id: '$response.body#/id'
                header.Authorization: 'Bearer {$response.body#/token}'
            goBack:
              operationId: goBack
              description: 'Go back on the new session.'
              parameters:
                path.id: '$response.body#/id'
                header.Authorization: 'Bearer {$response.body#/token}'
            setParams:
              operationId: setParams
              description: 'Replace the params of the new session''s top screen (its only screen at the graph''s start path).'
              parameters:
                path.id: '$response.body#/id'
                path.screen: '$response.body#/screens/0/id'
                header.Authorization: 'Bearer {$response.body#/token}'
            patchState:
              operationId: patchState
              description: 'Patch the state of the new session''s root screen.'
              parameters:
                path.id: '$response.body#/id'
                path.screen: '$response.body#/screens/0/id'
                header.Authorization: 'Bearer {$response.body#/token}'
            listEvents:
              operationId: listEvents
              description: 'Read the new session''s event log.'
              parameters:
                path.id: '$response.body#/id'
                header.Authorization: 'Bearer {$response.body#/token}'
        '400':
          $ref: '#/components/responses/BadRequest'
        '401':
          $ref: '#/components/responses/Unauthorized'
        '403':
          $ref: '#/components/responses/Forbidden'
        '405':
          $ref: '#/components/responses/MethodNotAllowed'
        '409':
          $ref: '#/components/responses/Conflict'
        '413':
          $ref: '#/components/responses/ContentTooLarge'
        '415':
          $ref: '#/components/responses/UnsupportedMediaType'
        '422':
          $ref: '#/components/responses/UnprocessableContent'
        '500':
          $ref: '#/components/responses/InternalError'
        '503':
          $ref: '#/components/responses/ServiceUnavailable'
    get:
      operationId: listSessions
      tags: [sessions]
      summary: List live sessions (admin)
      description: |
        Needs the admin token. A missing `Authorization` answers 401 `unauthorized`; a wrong
        token, or a daemon started without an admin token, answers 403 `forbidden`.
      security:
        - adminToken: []
      parameters:
        - name: limit
          in: query
          required: false
          description: The most sessions to list.
          schema:
            type: integer
            minimum: 1
            maximum: 1000
            default: 100
      responses:
        '200':
          description: The live sessions.
          headers:
            X-Request-Id:
              $ref: '#/components/headers/X-Request-Id'
          content:
            application/json:
              schema:
                $ref: '#/components/schemas/SessionList'
              example:
                sessions:
                  - {"id": "7f3c9a2e5b1d4c6f8a0e2b4d6f8a1c3e", "graph": {"name": "news", "version": 1}, "version": 2, "path": "/top/list_news(category=0)/show_news(id=44)"}
                  - {"id": "0d41b7e2c95a4f38b6e1a7c3d2f05e9b", "graph": {"name": "news", "version": 1}, "version": 1, "path": "/top"}
        '400':
          $ref: '#/components/responses/BadRequest'
        '401':
          $ref: '#/components/responses/Unauthorized'
        '403':
          $ref: '#/components/responses/Forbidden'
        '405':
          $ref: '#/components/responses/MethodNotAllowed'
        '500':
          $ref: '#/components/responses/InternalError'
        '503':
          $ref: '#/components/responses/StoreUnavailable'

  /v1/sessions/{id}:
    parameters:
      - $ref: '#/components/parameters/SessionId'
    get:
      operationId: getSession
      tags: [sessions]
      summary: Read a session
      security:
        - sessionToken: []
        - adminToken: []
      responses:
        '200':
          description: The session view.
          headers:
            X-Request-Id:
              $ref: '#/components/headers/X-Request-Id'
            ETag:
              $ref: '#/components/headers/ETag'
          content:
            application/json:
              schema:
                $ref: '#/components/schemas/SessionView'
              examples:
                stack:
                  summary: A pushed stack
                  value:
                    id: "7f3c9a2e5b1d4c6f8a0e2b4d6f8a1c3e"
                    graph: {"name": "news", "version": 1}
                    version: 2
                    path: "/top/list_news(category=0)/show_news(id=44)"
                    screens:
                      - {"id": "e1", "scene": "top", "segue": "/", "container": "navigation", "params": {}, "deps": {}, "state": {}}
                      - {"id": "e2", "scene": "list_news", "segue": "/", "container": "none", "params": {"category": 0}, "deps": {}, "state": {}}
                      - {"id": "e3", "scene": "show_news", "segue": "/", "container": "none", "params": {"id": 44}, "deps": {}, "state": {}}
                    context: {}
                tabs:
                  summary: A tab bar; the friend tab's stack is saved while profile is selected
                  value:
                    id: "7f3c9a2e5b1d4c6f8a0e2b4d6f8a1c3e"
                    graph: {"name": "news", "version": 1}
                    version: 3
                    path: "/top/home#profile/help"
                    screens:
                      - {"id": "e1", "scene": "top", "segue": "/", "container": "navigation", "params": {}, "deps": {}, "state": {}}
                      - id: e2
                        scene: home
                        segue: "/"
                        container: none
                        params: {}
                        deps: {}
                        state: {}
                        tabs:
                          selected: profile
                          saved:
                            friend:
                              - {"id": "e3", "scene": "friend", "segue": "#", "container": "none", "params": {}, "deps": {}, "state": {}}
                              - {"id": "e4", "scene": "show_friend", "segue": "/", "container": "none", "params": {"name": "ken"}, "deps": {}, "state": {}}
                      - {"id": "e5", "scene": "profile", "segue": "#", "container": "none", "params": {}, "deps": {"locale": "ja", "user": "u1"}, "state": {"editing": false}}
                      - {"id": "e6", "scene": "help", "segue": "/", "container": "none", "params": {}, "deps": {}, "state": {}}
                    context: {"locale": "ja", "user": "u1"}
        '401':
          $ref: '#/components/responses/Unauthorized'
        '404':
          $ref: '#/components/responses/NotFound'
        '405':
          $ref: '#/components/responses/MethodNotAllowed'
        '422':
          $ref: '#/components/responses/SessionUnusable'
        '500':
          $ref: '#/components/responses/InternalError'
        '503':
          $ref: '#/components/responses/StoreUnavailable'
    delete:
      operationId: deleteSession
      tags: [sessions]
      summary: End a session
      description: |
        Ends the session and forgets it; its token stops working. With `If-Match`, only if the
        session is still at a version it names (otherwise 412 and nothing is deleted).
      security:
        - sessionToken: []
        - adminToken: []
      parameters:
        - $ref: '#/components/parameters/IfMatch'
      responses:
        '204':
          description: The session is gone.
          headers:
            X-Request-Id:
              $ref: '#/components/headers/X-Request-Id'
        '401':
          $ref: '#/components/responses/Unauthorized'
        '404':
          $ref: '#/components/responses/NotFound'
        '405':
          $ref: '#/components/responses/MethodNotAllowed'
        '412':
          $ref: '#/components/responses/PreconditionFailed'
        '422':
          $ref: '#/components/responses/SessionUnusable'
        '500':
          $ref: '#/components/responses/InternalError'
        '503':
          $ref: '#/components/responses/StoreUnavailable'

  /v1/sessions/{id}/navigate:
    parameters:
      - $ref: '#/components/parameters/SessionId'
    post:
      operationId: navigate
      tags: [navigation]
      summary: Navigate to a path
      description: |
        Takes the stage to `path` the DeepTransition way: keep the common prefix of the current
        and the target path, remove the rest of the current stage in one step, then add the new
        screens in order. Every check runs first; a refused navigation changes nothing.

        Path grammar (DeepTransition, made strict):
        - A component is a scene name (`[A-Za-z0-9_.-]+`) after a segue: `/name` pushes,
          `!name` presents modally, `!/name` presents modally in a navigation container of its
          own, `#name` selects a tab of the tabs screen before it (`#/name`: the tab in its own
          navigation container). A relative path's first component may omit `/`.
        - `name(k=v,…)` gives parameters; values may percent-encode `,` `)` `%` and any other
          byte; `(q=)` is the empty string. Printed paths sort keys.
        - `^…` is absolute (from the root, e.g. `^/top/list_news`); anything else is relative to
          the current top. `..` (only at the start, repeatable: `../..`) goes up one screen
          first. `up(n=K)` as the whole path goes up K screens (K ≥ 1, default 1).
        - The target is normalised against the graph before diffing: values take their type's
          canonical text and defaults are filled in, so `path` in the answer shows every
          parameter (`list_news` becomes `list_news(category=0)`).

        A path that does not parse answers 400 `invalid_path` with the character `offset`.
      security:
        - sessionToken: []
        - adminToken: []
      parameters:
        - $ref: '#/components/parameters/IfMatch'
        - $ref: '#/components/parameters/IdempotencyKey'
      requestBody:
        required: true
        content:
          application/json:
            schema:
              $ref: '#/components/schemas/NavigateRequest'
            examples:
              deepLink:
                summary: Push two screens in one transition
                value: {"path": "list_news/show_news(id=44)"}
              noOp:
                summary: The current path, written absolutely and without defaults
                value: {"path": "^/top/list_news/show_news(id=44)"}
      responses:
        '200':
          description: The new session view and the events of the transition (none for a no-op).
          headers:
            X-Request-Id:
              $ref: '#/components/headers/X-Request-Id'
            ETag:
              $ref: '#/components/headers/ETag'
            Idempotent-Replayed:
              $ref: '#/components/headers/Idempotent-Replayed'
          content:
            application/json:
              schema:
                $ref: '#/components/schemas/MutationResult'
              examples:
                deepLink:
                  summary: From /top to /top/list_news(category=0)/show_news(id=44)
                  value:
                    id: "7f3c9a2e5b1d4c6f8a0e2b4d6f8a1c3e"
                    graph: {"name": "news", "version": 1}
                    version: 2
                    path: "/top/list_news(category=0)/show_news(id=44)"
                    screens:
                      - {"id": "e1", "scene": "top", "segue": "/", "container": "navigation", "params": {}, "deps": {}, "state": {}}
                      - {"id": "e2", "scene": "list_news", "segue": "/", "container": "none", "params": {"category": 0}, "deps": {}, "state": {}}
                      - {"id": "e3", "scene": "show_news", "segue": "/", "container": "none", "params": {"id": 44}, "deps": {}, "state": {}}
                    context: {}
                    events:
                      - {"seq": 6, "type": "transitionStart", "screen": null, "scene": null, "transition": 2, "from": "/top", "to": "/top/list_news(category=0)/show_news(id=44)"}
                      - {"seq": 7, "type": "awake", "screen": "e2", "scene": "list_news", "transition": 2}
                      - {"seq": 8, "type": "awake", "screen": "e3", "scene": "show_news", "transition": 2}
                      - {"seq": 9, "type": "willDisappear", "screen": "e1", "scene": "top", "transition": 2}
                      - {"seq": 10, "type": "willAppear", "screen": "e3", "scene": "show_news", "transition": 2}
                      - {"seq": 11, "type": "didDisappear", "screen": "e1", "scene": "top", "transition": 2}
                      - {"seq": 12, "type": "didAppear", "screen": "e3", "scene": "show_news", "transition": 2}
                      - {"seq": 13, "type": "transitionEnd", "screen": null, "scene": null, "transition": 2, "from": "/top", "to": "/top/list_news(category=0)/show_news(id=44)"}
                noOp:
                  summary: "Already there: same version, no events"
                  value:
                    id: "7f3c9a2e5b1d4c6f8a0e2b4d6f8a1c3e"
                    graph: {"name": "news", "version": 1}
                    version: 2
                    path: "/top/list_news(category=0)/show_news(id=44)"
                    screens:
                      - {"id": "e1", "scene": "top", "segue": "/", "container": "navigation", "params": {}, "deps": {}, "state": {}}
                      - {"id": "e2", "scene": "list_news", "segue": "/", "container": "none", "params": {"category": 0}, "deps": {}, "state": {}}
                      - {"id": "e3", "scene": "show_news", "segue": "/", "container": "none", "params": {"id": 44}, "deps": {}, "state": {}}
                    context: {}
                    events: []
        '400':
          $ref: '#/components/responses/BadRequest'
        '401':
          $ref: '#/components/responses/Unauthorized'
        '403':
          $ref: '#/components/responses/Forbidden'
        '404':
          $ref: '#/components/responses/NotFound'
        '405':
          $ref: '#/components/responses/MethodNotAllowed'
        '409':
          $ref: '#/components/responses/Conflict'
        '412':
          $ref: '#/components/responses/PreconditionFailed'
        '413':
          $ref: '#/components/responses/ContentTooLarge'
        '415':
          $ref: '#/components/responses/UnsupportedMediaType'
        '422':
          $ref: '#/components/responses/UnprocessableContent'
        '500':
          $ref: '#/components/responses/InternalError'
        '503':
          $ref: '#/components/responses/StoreUnavailable'

  /v1/sessions/{id}/transitions:
    parameters:
      - $ref: '#/components/parameters/SessionId'
    post:
      operationId: applyTransition
      tags: [navigation]
      summary: Apply a named link
      description: |
        Applies a link declared on the top screen's scene, or a global one, by navigating to its
        path template with the `{placeholders}` filled from `params` (percent-encoded). An
        unknown link answers 422 `unknown_transition`; a missing placeholder answers 422
        `invalid_params` with `param`.
      security:
        - sessionToken: []
        - adminToken: []
      parameters:
        - $ref: '#/components/parameters/IfMatch'
        - $ref: '#/components/parameters/IdempotencyKey'
      requestBody:
        required: true
        content:
          application/json:
            schema:
              $ref: '#/components/schemas/TransitionRequest'
            example: {"name": "news", "params": {"category": 3}}
      responses:
        '200':
          description: The new session view and the events of the transition (none for a no-op).
          headers:
            X-Request-Id:
              $ref: '#/components/headers/X-Request-Id'
            ETag:
              $ref: '#/components/headers/ETag'
            Idempotent-Replayed:
              $ref: '#/components/headers/Idempotent-Replayed'
          content:
            application/json:
              schema:
                $ref: '#/components/schemas/MutationResult'
              example:
                id: "7f3c9a2e5b1d4c6f8a0e2b4d6f8a1c3e"
                graph: {"name": "news", "version": 1}
                version: 2
                path: "/top/list_news(category=3)"
                screens:
                  - {"id": "e1", "scene": "top", "segue": "/", "container": "navigation", "params": {}, "deps": {}, "state": {}}
                  - {"id": "e2", "scene": "list_news", "segue": "/", "container": "none", "params": {"category": 3}, "deps": {}, "state": {}}
                context: {}
                events:
                  - {"seq": 6, "type": "transitionStart", "screen": null, "scene": null, "transition": 2, "from": "/top", "to": "/top/list_news(category=3)"}
                  - {"seq": 7, "type": "awake", "screen": "e2", "scene": "list_news", "transition": 2}
                  - {"seq": 8, "type": "willDisappear", "screen": "e1", "scene": "top", "transition": 2}
                  - {"seq": 9, "type": "willAppear", "screen": "e2", "scene": "list_news", "transition": 2}
                  - {"seq": 10, "type": "didDisappear", "screen": "e1", "scene": "top", "transition": 2}
                  - {"seq": 11, "type": "didAppear", "screen": "e2", "scene": "list_news", "transition": 2}
                  - {"seq": 12, "type": "transitionEnd", "screen": null, "scene": null, "transition": 2, "from": "/top", "to": "/top/list_news(category=3)"}
        '400':
          $ref: '#/components/responses/BadRequest'
        '401':
          $ref: '#/components/responses/Unauthorized'
        '403':
          $ref: '#/components/responses/Forbidden'
        '404':
          $ref: '#/components/responses/NotFound'
        '405':
          $ref: '#/components/responses/MethodNotAllowed'
        '409':
          $ref: '#/components/responses/Conflict'
        '412':
          $ref: '#/components/responses/PreconditionFailed'
        '413':
          $ref: '#/components/responses/ContentTooLarge'
        '415':
          $ref: '#/components/responses/UnsupportedMediaType'
        '422':
          $ref: '#/components/responses/UnprocessableContent'
        '500':
          $ref: '#/components/responses/InternalError'
        '503':
          $ref: '#/components/responses/StoreUnavailable'

  /v1/sessions/{id}/exit:
    parameters:
      - $ref: '#/components/parameters/SessionId'
    post:
      operationId: exitScene
      tags: [navigation]
      summary: Exit the top screen
      description: |
        Removes the top screen (KabuKit `exitScene`). A scene that is not removable answers 409
        `not_removable`; exiting the root answers 409 `stack_underflow`.
      security:
        - sessionToken: []
        - adminToken: []
      parameters:
        - $ref: '#/components/parameters/IfMatch'
        - $ref: '#/components/parameters/IdempotencyKey'
      requestBody:
        required: false
        content:
          application/json:
            schema:
              $ref: '#/components/schemas/ExitRequest'
            example: {}
      responses:
        '200':
          description: The new session view and the events of the transition.
          headers:
            X-Request-Id:
              $ref: '#/components/headers/X-Request-Id'
            ETag:
              $ref: '#/components/headers/ETag'
            Idempotent-Replayed:
              $ref: '#/components/headers/Idempotent-Replayed'
          content:
            application/json:
              schema:
                $ref: '#/components/schemas/MutationResult'
              example:
                id: "7f3c9a2e5b1d4c6f8a0e2b4d6f8a1c3e"
                graph: {"name": "news", "version": 1}
                version: 3
                path: "/top/list_news(category=0)"
                screens:
                  - {"id": "e1", "scene": "top", "segue": "/", "container": "navigation", "params": {}, "deps": {}, "state": {}}
                  - {"id": "e2", "scene": "list_news", "segue": "/", "container": "none", "params": {"category": 0}, "deps": {}, "state": {}}
                context: {}
                events:
                  - {"seq": 14, "type": "transitionStart", "screen": null, "scene": null, "transition": 3, "from": "/top/list_news(category=0)/show_news(id=44)", "to": "/top/list_news(category=0)"}
                  - {"seq": 15, "type": "willDisappear", "screen": "e3", "scene": "show_news", "transition": 3}
                  - {"seq": 16, "type": "willAppear", "screen": "e2", "scene": "list_news", "transition": 3}
                  - {"seq": 17, "type": "didDisappear", "screen": "e3", "scene": "show_news", "transition": 3}
                  - {"seq": 18, "type": "didAppear", "screen": "e2", "scene": "list_news", "transition": 3}
                  - {"seq": 19, "type": "remove", "screen": "e3", "scene": "show_news", "transition": 3}
                  - {"seq": 20, "type": "transitionEnd", "screen": null, "scene": null, "transition": 3, "from": "/top/list_news(category=0)/show_news(id=44)", "to": "/top/list_news(category=0)"}
        '400':
          $ref: '#/components/responses/BadRequest'
        '401':
          $ref: '#/components/responses/Unauthorized'
        '404':
          $ref: '#/components/responses/NotFound'
        '405':
          $ref: '#/components/responses/MethodNotAllowed'
        '409':
          $ref: '#/components/responses/Conflict'
        '412':
          $ref: '#/components/responses/PreconditionFailed'
        '413':
          $ref: '#/components/responses/ContentTooLarge'
        '415':
          $ref: '#/components/responses/UnsupportedMediaType'
        '422':
          $ref: '#/components/responses/UnprocessableContent'
        '500':
          $ref: '#/components/responses/InternalError'
        '503':
          $ref: '#/components/responses/StoreUnavailable'

  /v1/sessions/{id}/back:
    parameters:
      - $ref: '#/components/parameters/SessionId'
    post:
      operationId: goBack
      tags: [navigation]
      summary: Go back K screens
      description: |
        Goes back `count` screens (default 1), like `up(n=count)`. Going back as far as the root
        or past it answers 409 `stack_underflow`; a non-removable screen among those removed
        answers 409 `not_removable`.
      security:
        - sessionToken: []
        - adminToken: []
      parameters:
        - $ref: '#/components/parameters/IfMatch'
        - $ref: '#/components/parameters/IdempotencyKey'
      requestBody:
        required: false
        content:
          application/json:
            schema:
              $ref: '#/components/schemas/BackRequest'
            example: {"count": 2}
      responses:
        '200':
          description: The new session view and the events of the transition.
          headers:
            X-Request-Id:
              $ref: '#/components/headers/X-Request-Id'
            ETag:
              $ref: '#/components/headers/ETag'
            Idempotent-Replayed:
              $ref: '#/components/headers/Idempotent-Replayed'
          content:
            application/json:
              schema:
                $ref: '#/components/schemas/MutationResult'
              example:
                id: "7f3c9a2e5b1d4c6f8a0e2b4d6f8a1c3e"
                graph: {"name": "news", "version": 1}
                version: 3
                path: "/top"
                screens:
                  - {"id": "e1", "scene": "top", "segue": "/", "container": "navigation", "params": {}, "deps": {}, "state": {}}
                context: {}
                events:
                  - {"seq": 14, "type": "transitionStart", "screen": null, "scene": null, "transition": 3, "from": "/top/list_news(category=0)/show_news(id=44)", "to": "/top"}
                  - {"seq": 15, "type": "willDisappear", "screen": "e3", "scene": "show_news", "transition": 3}
                  - {"seq": 16, "type": "willAppear", "screen": "e1", "scene": "top", "transition": 3}
                  - {"seq": 17, "type": "didDisappear", "screen": "e3", "scene": "show_news", "transition": 3}
                  - {"seq": 18, "type": "didAppear", "screen": "e1", "scene": "top", "transition": 3}
                  - {"seq": 19, "type": "remove", "screen": "e3", "scene": "show_news", "transition": 3}
                  - {"seq": 20, "type": "remove", "screen": "e2", "scene": "list_news", "transition": 3}
                  - {"seq": 21, "type": "transitionEnd", "screen": null, "scene": null, "transition": 3, "from": "/top/list_news(category=0)/show_news(id=44)", "to": "/top"}
        '400':
          $ref: '#/components/responses/BadRequest'
        '401':
          $ref: '#/components/responses/Unauthorized'
        '404':
          $ref: '#/components/responses/NotFound'
        '405':
          $ref: '#/components/responses/MethodNotAllowed'
        '409':
          $ref: '#/components/responses/Conflict'
        '412':
          $ref: '#/components/responses/PreconditionFailed'
        '413':
          $ref: '#/components/responses/ContentTooLarge'
        '415':
          $ref: '#/components/responses/UnsupportedMediaType'
        '422':
          $ref: '#/components/responses/UnprocessableContent'
        '500':
          $ref: '#/components/responses/InternalError'
        '503':
          $ref: '#/components/responses/StoreUnavailable'

  /v1/sessions/{id}/screens/{screen}/params:
    parameters:
      - $ref: '#/components/parameters/SessionId'
      - $ref: '#/components/parameters/ScreenId'
    put:
      operationId: setParams
      tags: [navigation]
      summary: Replace the params of the top screen
      description: |
        Replaces (does not merge) the params of the top screen (DeepTransition `changeParams`);
        defaults are filled in and values checked against the scene's `params` schema. Emits
        `paramsChanged`; the same params again is a no-op. The body is the params object itself.
        Only the top screen can be changed: the id of another screen on the stage answers 400
        `invalid_request`, an unknown id answers 404 `not_found`.
      security:
        - sessionToken: []
        - adminToken: []
      parameters:
        - $ref: '#/components/parameters/IfMatch'
      requestBody:
        required: true
        content:
          application/json:
            schema:
              $ref: '#/components/schemas/Params'
            example: {"category": 7}
      responses:
        '200':
          description: The new session view and its `paramsChanged` event (none for a no-op).
          headers:
            X-Request-Id:
              $ref: '#/components/headers/X-Request-Id'
            ETag:
              $ref: '#/components/headers/ETag'
          content:
            application/json:
              schema:
                $ref: '#/components/schemas/MutationResult'
              example:
                id: "7f3c9a2e5b1d4c6f8a0e2b4d6f8a1c3e"
                graph: {"name": "news", "version": 1}
                version: 3
                path: "/top/list_news(category=7)"
                screens:
                  - {"id": "e1", "scene": "top", "segue": "/", "container": "navigation", "params": {}, "deps": {}, "state": {}}
                  - {"id": "e2", "scene": "list_news", "segue": "/", "container": "none", "params": {"category": 7}, "deps": {}, "state": {}}
                context: {}
                events:
                  - {"seq": 13, "type": "paramsChanged", "screen": "e2", "scene": "list_news", "transition": 3}
        '400':
          $ref: '#/components/responses/BadRequest'
        '401':
          $ref: '#/components/responses/Unauthorized'
        '404':
          $ref: '#/components/responses/NotFound'
        '405':
          $ref: '#/components/responses/MethodNotAllowed'
        '412':
          $ref: '#/components/responses/PreconditionFailed'
        '413':
          $ref: '#/components/responses/ContentTooLarge'
        '415':
          $ref: '#/components/responses/UnsupportedMediaType'
        '422':
          $ref: '#/components/responses/UnprocessableContent'
        '500':
          $ref: '#/components/responses/InternalError'
        '503':
          $ref: '#/components/responses/StoreUnavailable'

  /v1/sessions/{id}/screens/{screen}/state:
    parameters:
      - $ref: '#/components/parameters/SessionId'
      - $ref: '#/components/parameters/ScreenId'
    patch:
      operationId: patchState
      tags: [navigation]
      summary: Merge-patch a screen's state
      description: |
        Applies an RFC 7396 JSON merge patch to the state of a screen on the stage (UseCaseKit
        `Store.update`): members are replaced, `null` removes a member. Emits `stateChanged`; a
        patch that changes nothing is a no-op. An unknown screen id answers 404 `not_found`.
      security:
        - sessionToken: []
        - adminToken: []
      parameters:
        - $ref: '#/components/parameters/IfMatch'
      requestBody:
        required: true
        content:
          application/merge-patch+json:
            schema:
              $ref: '#/components/schemas/MergePatch'
            example: {"editing": true, "draft": {"bio": "hi"}}
          application/json:
            schema:
              $ref: '#/components/schemas/MergePatch'
            example: {"draft": null}
      responses:
        '200':
          description: The new session view and its `stateChanged` event (none for a no-op).
          headers:
            X-Request-Id:
              $ref: '#/components/headers/X-Request-Id'
            ETag:
              $ref: '#/components/headers/ETag'
          content:
            application/json:
              schema:
                $ref: '#/components/schemas/MutationResult'
              example:
                id: "7f3c9a2e5b1d4c6f8a0e2b4d6f8a1c3e"
                graph: {"name": "news", "version": 1}
                version: 3
                path: "/top/home#profile"
                screens:
                  - {"id": "e1", "scene": "top", "segue": "/", "container": "navigation", "params": {}, "deps": {}, "state": {}}
                  - {"id": "e2", "scene": "home", "segue": "/", "container": "none", "params": {}, "deps": {}, "state": {}, "tabs": {"selected": "profile", "saved": {}}}
                  - {"id": "e3", "scene": "profile", "segue": "#", "container": "none", "params": {}, "deps": {"locale": "ja", "user": "u1"}, "state": {"draft": {"bio": "hi"}, "editing": true}}
                context: {"locale": "ja", "user": "u1"}
                events:
                  - {"seq": 14, "type": "stateChanged", "screen": "e3", "scene": "profile", "transition": 3}
        '400':
          $ref: '#/components/responses/BadRequest'
        '401':
          $ref: '#/components/responses/Unauthorized'
        '404':
          $ref: '#/components/responses/NotFound'
        '405':
          $ref: '#/components/responses/MethodNotAllowed'
        '412':
          $ref: '#/components/responses/PreconditionFailed'
        '413':
          $ref: '#/components/responses/ContentTooLarge'
        '415':
          $ref: '#/components/responses/UnsupportedMediaType'
        '422':
          $ref: '#/components/responses/SessionUnusable'
        '500':
          $ref: '#/components/responses/InternalError'
        '503':
          $ref: '#/components/responses/StoreUnavailable'

  /v1/sessions/{id}/events:
    parameters:
      - $ref: '#/components/parameters/SessionId'
    get:
      operationId: listEvents
      tags: [navigation]
      summary: Read the event log
      description: |
        The retained events with `seq` greater than `after`, oldest first, at most `limit` of
        them. Pass `next` back as `after` to read on; `next` equals `after` when there is nothing
        new. A query value out of range answers 400 `invalid_request`.
      security:
        - sessionToken: []
        - adminToken: []
      parameters:
        - name: after
          in: query
          required: false
          description: Return events with `seq` greater than this.
          schema:
            type: integer
            minimum: 0
            maximum: 9007199254740991
            default: 0
        - name: limit
          in: query
          required: false
          description: The most events to return.
          schema:
            type: integer
            minimum: 1
            maximum: 1000
            default: 100
      responses:
        '200':
          description: A page of the event log.
          headers:
            X-Request-Id:
              $ref: '#/components/headers/X-Request-Id'
            ETag:
              $ref: '#/components/headers/ETag'
          content:
            application/json:
              schema:
                $ref: '#/components/schemas/EventLog'
              examples:
                page:
                  summary: "after=5: the events of the navigation to show_news(id=44)"
                  value:
                    events:
                      - {"seq": 6, "type": "transitionStart", "screen": null, "scene": null, "transition": 2, "from": "/top", "to": "/top/list_news(category=0)/show_news(id=44)"}
                      - {"seq": 7, "type": "awake", "screen": "e2", "scene": "list_news", "transition": 2}
                      - {"seq": 8, "type": "awake", "screen": "e3", "scene": "show_news", "transition": 2}
                      - {"seq": 9, "type": "willDisappear", "screen": "e1", "scene": "top", "transition": 2}
                      - {"seq": 10, "type": "willAppear", "screen": "e3", "scene": "show_news", "transition": 2}
                      - {"seq": 11, "type": "didDisappear", "screen": "e1", "scene": "top", "transition": 2}
                      - {"seq": 12, "type": "didAppear", "screen": "e3", "scene": "show_news", "transition": 2}
                      - {"seq": 13, "type": "transitionEnd", "screen": null, "scene": null, "transition": 2, "from": "/top", "to": "/top/list_news(category=0)/show_news(id=44)"}
                    next: 13
                caughtUp:
                  summary: "after=13: nothing new"
                  value:
                    events: []
                    next: 13
        '400':
          $ref: '#/components/responses/BadRequest'
        '401':
          $ref: '#/components/responses/Unauthorized'
        '404':
          $ref: '#/components/responses/NotFound'
        '405':
          $ref: '#/components/responses/MethodNotAllowed'
        '422':
          $ref: '#/components/responses/SessionUnusable'
        '500':
          $ref: '#/components/responses/InternalError'
        '503':
          $ref: '#/components/responses/StoreUnavailable'

  /v1/graphs:
    get:
      operationId: listGraphs
      tags: [graphs]
      summary: List graphs
      description: The latest version of every loaded graph. No authentication.
      security: []
      responses:
        '200':
          description: The graphs.
          headers:
            X-Request-Id:
              $ref: '#/components/headers/X-Request-Id'
          content:
            application/json:
              schema:
                $ref: '#/components/schemas/GraphList'
              example:
                graphs: [{"name": "news", "version": 1, "start": "/top"}]
        '405':
          $ref: '#/components/responses/MethodNotAllowed'
        '500':
          $ref: '#/components/responses/InternalError'

  /v1/graphs/{name}:
    parameters:
      - $ref: '#/components/parameters/GraphName'
    get:
      operationId: getGraph
      tags: [graphs]
      summary: Read a graph
      description: |
        The latest version of a graph (or the one `version` names), its document as uploaded
        and its warnings. An unknown graph or version answers 404 `not_found` (like any
        resource that is not there; `unknown_graph`, 422, is for a request that names a graph to
        use). Every process sharing a store serves every version stored through any of them; a
        version another process uploaded becomes the latest here within about a second. No
        authentication.
      security: []
      parameters:
        - name: version
          in: query
          required: false
          description: A stored version of the graph; default the latest.
          schema:
            type: integer
            minimum: 1
            maximum: 2147483647
      responses:
        '200':
          description: The graph.
          headers:
            X-Request-Id:
              $ref: '#/components/headers/X-Request-Id'
            ETag:
              $ref: '#/components/headers/GraphETag'
          content:
            application/json:
              schema:
                $ref: '#/components/schemas/GraphDetail'
              example:
                name: news
                version: 1
                start: "/top"
                document:
                  name: news
                  start: "/top"
                  scenes:
                    top:
                      links:
                        news: {"path": "list_news(category={category})"}
                        coupons: {"path": "!/list_coupon"}
                    list_news:
                      params: {"category": {"type": "int", "default": 0}}
                      links: {"show": {"path": "show_news(id={id})"}}
                    show_news: {"params": {"id": {"type": "int", "required": true}}}
                    list_coupon: {}
                    show_coupon: {"params": {"id": {"type": "int", "required": true}}}
                    home: {"container": "tabs", "tabs": ["friend", "profile"]}
                    friend: {}
                    show_friend: {"params": {"name": {"type": "string", "required": true}}}
                    profile: {"requires": ["user"], "inject": ["user", "locale"], "state": {"editing": false}}
                    help: {}
                    login: {}
                    onboarding: {"removable": false}
                  links: {"login": {"path": "!login"}, "top": {"path": "^/top"}}
                warnings: []
        '400':
          $ref: '#/components/responses/BadRequest'
        '404':
          $ref: '#/components/responses/NotFound'
        '405':
          $ref: '#/components/responses/MethodNotAllowed'
        '500':
          $ref: '#/components/responses/InternalError'
        '503':
          $ref: '#/components/responses/StoreUnavailable'
    put:
      operationId: putGraph
      tags: [graphs]
      summary: Upload a graph (admin)
      description: |
        Validates and stores a graph document as the next version of `{name}` (version 1 for a
        new graph, 201). The store allocates the number, so one version number names one
        document in every process sharing the store, and concurrent uploads through different
        processes get distinct versions. A document equal to the latest version (as parsed
        JSON) is not a new version: it answers 200 with that version. The document's `name`
        must equal `{name}`. A document with errors answers
        422 `invalid_graph` listing every issue with its JSON pointer; warnings (likely
        mistakes) do not stop a graph from loading, and a scene that only deep links reach is
        not one. Sessions keep the graph version
        they started on. Needs the admin token: a missing `Authorization` answers 401
        `unauthorized`; a wrong token, or a daemon started without one, answers 403 `forbidden`.
      security:
        - adminToken: []
      requestBody:
        required: true
        content:
          application/json:
            schema:
              $ref: '#/components/schemas/GraphDocument'
            example:
              name: news
              start: "/top"
              scenes:
                top:
                  links:
                    news: {"path": "list_news(category={category})"}
                    coupons: {"path": "!/list_coupon"}
                list_news:
                  params: {"category": {"type": "int", "default": 0}}
                  links: {"show": {"path": "show_news(id={id})"}}
                show_news: {"params": {"id": {"type": "int", "required": true}}}
                list_coupon: {}
                show_coupon: {"params": {"id": {"type": "int", "required": true}}}
                home: {"container": "tabs", "tabs": ["friend", "profile"]}
                friend: {}
                show_friend: {"params": {"name": {"type": "string", "required": true}}}
                profile: {"requires": ["user"], "inject": ["user", "locale"], "state": {"editing": false}}
                help: {}
                login: {}
                onboarding: {"removable": false}
              links: {"login": {"path": "!login"}, "top": {"path": "^/top"}}
          application/yaml:
            schema:
              $ref: '#/components/schemas/GraphDocument'
      responses:
        '200':
          description: A new version of an existing graph was stored, or the document already is its latest version (that version is answered).
          headers:
            X-Request-Id:
              $ref: '#/components/headers/X-Request-Id'
            ETag:
              $ref: '#/components/headers/GraphETag'
          content:
            application/json:
              schema:
                $ref: '#/components/schemas/GraphUploadResult'
              example:
                name: news
                version: 2
                warnings: []
        '201':
          description: A new graph was stored (version 1).
          headers:
            X-Request-Id:
              $ref: '#/components/headers/X-Request-Id'
            ETag:
              $ref: '#/components/headers/GraphETag'
            Location:
              description: The graph's URL, `/v1/graphs/{name}`.
              schema:
                type: string
          content:
            application/json:
              schema:
                $ref: '#/components/schemas/GraphUploadResult'
              example:
                name: news
                version: 1
                warnings: []
        '400':
          $ref: '#/components/responses/BadRequest'
        '401':
          $ref: '#/components/responses/Unauthorized'
        '403':
          $ref: '#/components/responses/Forbidden'
        '405':
          $ref: '#/components/responses/MethodNotAllowed'
        '413':
          $ref: '#/components/responses/ContentTooLarge'
        '415':
          $ref: '#/components/responses/UnsupportedMediaType'
        '422':
          $ref: '#/components/responses/UnprocessableContent'
        '500':
          $ref: '#/components/responses/InternalError'
        '503':
          $ref: '#/components/responses/StoreUnavailable'

  /healthz:
    get:
      operationId: health
      tags: [operations]
      summary: Liveness
      description: 200 while the process serves requests.
      security: []
      responses:
        '200':
          description: Alive.
          headers:
            X-Request-Id:
              $ref: '#/components/headers/X-Request-Id'
          content:
            application/json:
              schema:
                $ref: '#/components/schemas/Health'
              example: {"status": "ok"}
        '405':
          $ref: '#/components/responses/MethodNotAllowed'
        '500':
          $ref: '#/components/responses/InternalError'

  /readyz:
    get:
      operationId: ready
      tags: [operations]
      summary: Readiness
      description: |
        200 while the daemon takes new work; 503 once it is draining for shutdown (`draining`),
        or while its store cannot take work (`store_unavailable`: a full or failing disk under
        SQLite, PostgreSQL down; probed at most about once a second), with `Retry-After`. Ready
        again by itself once the store answers.
      security: []
      responses:
        '200':
          description: Ready.
          headers:
            X-Request-Id:
              $ref: '#/components/headers/X-Request-Id'
          content:
            application/json:
              schema:
                $ref: '#/components/schemas/Health'
              example: {"status": "ready"}
        '405':
          $ref: '#/components/responses/MethodNotAllowed'
        '500':
          $ref: '#/components/responses/InternalError'
        '503':
          description: Draining, or the store is unavailable; take this instance out of the load balancer.
          headers:
            X-Request-Id:
              $ref: '#/components/headers/X-Request-Id'
            Retry-After:
              $ref: '#/components/headers/Retry-After'
          content:
            application/json:
              schema:
                $ref: '#/components/schemas/Health'
              examples:
                draining:
                  value: {"status": "draining"}
                store_unavailable:
                  value: {"status": "store_unavailable"}

  /metrics:
    get:
      operationId: metrics
      tags: [operations]
      summary: Prometheus metrics
      description: |
        Prometheus text exposition (format 0.0.4). Labels are route templates, never raw paths or
        session ids.
      security: []
      responses:
        '200':
          description: The metrics.
          headers:
            X-Request-Id:
              $ref: '#/components/headers/X-Request-Id'
          content:
            text/plain:
              schema:
                type: string
              example: |
                # HELP navd_http_requests_total HTTP requests answered.
                # TYPE navd_http_requests_total counter
                navd_http_requests_total{method="POST",route="/v1/sessions/{id}/navigate",status="200"} 42
        '405':
          $ref: '#/components/responses/MethodNotAllowed'
        '500':
          $ref: '#/components/responses/InternalError'

  /openapi.yaml:
    get:
      operationId: getOpenAPI
      tags: [operations]
      summary: This document
      security: []
      responses:
        '200':
          description: The OpenAPI document the daemon implements.
          headers:
            X-Request-Id:
              $ref: '#/components/headers/X-Request-Id'
          content:
            application/yaml: {}
        '405':
          $ref: '#/components/responses/MethodNotAllowed'
        '500':
          $ref: '#/components/responses/InternalError'

components:
  securitySchemes:
    sessionToken:
      type: http
      scheme: bearer
      description: |
        The session's token, returned once by `createSession` (at least 128 random bits; the
        daemon stores only its hash). Every `/v1/sessions/{id}…` route also accepts the admin
        token in its place. Without a token: 401 `unauthorized` (`WWW-Authenticate: Bearer`);
        with a token that is not this session's, whether or not the session exists: the same 401
        with `WWW-Authenticate: Bearer error="invalid_token"`.
    backendToken:
      type: http
      scheme: bearer
      description: |
        The daemon's backend token (`--backend-token` / `NAVD_BACKEND_TOKEN`), for the backend
        that creates sessions and so sets their context. When the daemon has one, `createSession`
        needs it (or the admin token); without one, anyone may create a session.
    adminToken:
      type: http
      scheme: bearer
      description: |
        The daemon's admin token (`--admin-token` / `NAVD_ADMIN_TOKEN`). Needed by `putGraph` and
        `listSessions`; also accepted on every session route. A daemon started without one
        refuses admin routes with 403 `forbidden`.

  parameters:
    SessionId:
      name: id
      in: path
      required: true
      description: The session id returned by `createSession`.
      schema:
        type: string
      example: 7f3c9a2e5b1d4c6f8a0e2b4d6f8a1c3e
    ScreenId:
      name: screen
      in: path
      required: true
      description: A screen id (`e1`, `e2`, …) from the session view.
      schema:
        type: string
      example: e2
    GraphName:
      name: name
      in: path
      required: true
      description: A graph name.
      schema:
        type: string
        pattern: '^[A-Za-z0-9_.-]+$'
      example: news
    IfMatch:
      name: If-Match
      in: header
      required: false
      description: |
        Apply the change only if the session is at one of these versions (its `ETag`, quoted):
        `*` (any version: the session exists) or a comma-separated list of entity tags such as
        `"2", "3"`, compared strongly (RFC 9110 §13.1.1), so a weak tag (`W/"2"`) never matches.
        Otherwise, or when the value is not such a list, 412 `version_conflict` and nothing
        changes.
      schema:
        type: string
      example: '"2"'
    IdempotencyKey:
      name: Idempotency-Key
      in: header
      required: false
      description: |
        Makes a retry safe: the same key with the same route, `If-Match` and body (compared as
        parsed JSON: member order, blanks and the spelling of numbers do not matter) gets the
        first answer again (status, headers and body); the same key with any of those different
        answers 422 `idempotency_key_reused`. Use a fresh value (a UUID, say) for each new intent.
        A value that is not 1 to 200 printable ASCII characters answers 400 `invalid_request`.
      schema:
        type: string
        minLength: 1
        maxLength: 200
        pattern: '^[ -~]+$'

  headers:
    GraphETag:
      description: 'The graph version as an entity tag: `"<version>"`.'
      required: true
      schema:
        type: string
        pattern: '^"[0-9]+"$'
    X-Request-Id:
      description: Identifies this request in the daemon's logs. Present on every answer.
      required: true
      schema:
        type: string
    ETag:
      description: The session's version, quoted (`"<version>"`). Send it back as `If-Match`.
      required: true
      schema:
        type: string
        pattern: '^"[1-9][0-9]*"$'
      example: '"2"'
    Location:
      description: The new session's URL, `/v1/sessions/{id}`.
      required: true
      schema:
        type: string
        pattern: '^/v1/sessions/[^/]+$'
      example: /v1/sessions/7f3c9a2e5b1d4c6f8a0e2b4d6f8a1c3e
    Idempotent-Replayed:
      description: '`true` on an answer replayed for a retry with the same `Idempotency-Key`; absent otherwise.'
      schema:
        type: string
        enum: ['true']
    Allow:
      description: The methods the route accepts, comma-separated.
      required: true
      schema:
        type: string
      example: GET, DELETE
    WWW-Authenticate:
      description: |
        The challenge (RFC 6750 §3): `Bearer` when no token was sent, `Bearer error="invalid_token"`
        when the token sent is not valid for the resource.
      required: true
      schema:
        type: string
        pattern: '^Bearer( error="invalid_token")?$'
      example: Bearer
    Retry-After:
      description: Seconds after which a retry may succeed.
      schema:
        type: string
      example: '1'

  responses:
    BadRequest:
      description: |
        400: `malformed_json` (the body is not JSON), `invalid_request` (a body, query or
        header of the wrong shape), `invalid_path` (a path that does not parse; `offset` is the
        character where parsing failed).
      headers:
        X-Request-Id:
          $ref: '#/components/headers/X-Request-Id'
      content:
        application/problem+json:
          schema:
            $ref: '#/components/schemas/Problem'
          examples:
            malformed_json:
              value:
                type: urn:navd:problem:malformed_json
                title: Malformed JSON
                status: 400
                detail: unexpected end of input at byte 12
                code: malformed_json
            invalid_request:
              value:
                type: urn:navd:problem:invalid_request
                title: Invalid request
                status: 400
                detail: count must be at least 1
                code: invalid_request
            invalid_path:
              value:
                type: urn:navd:problem:invalid_path
                title: Invalid path
                status: 400
                detail: empty key
                code: invalid_path
                offset: 5
    Unauthorized:
      description: |
        401: `unauthorized`: no bearer token, or (on session routes) a token that is not valid for
        the session, whether or not it exists. On admin routes, see the operation.
      headers:
        X-Request-Id:
          $ref: '#/components/headers/X-Request-Id'
        WWW-Authenticate:
          $ref: '#/components/headers/WWW-Authenticate'
      content:
        application/problem+json:
          schema:
            $ref: '#/components/schemas/Problem'
          example:
            type: urn:navd:problem:unauthorized
            title: Unauthorized
            status: 401
            detail: a bearer token is required
            code: unauthorized
    Forbidden:
      description: |
        403: `forbidden` (an admin route without the right admin token), `transition_refused`
        (a scene's `requires` is not met by the session context).
      headers:
        X-Request-Id:
          $ref: '#/components/headers/X-Request-Id'
      content:
        application/problem+json:
          schema:
            $ref: '#/components/schemas/Problem'
          examples:
            forbidden:
              value:
                type: urn:navd:problem:forbidden
                title: Forbidden
                status: 403
                detail: the admin token is required
                code: forbidden
            transition_refused:
              value:
                type: urn:navd:problem:transition_refused
                title: Transition refused
                status: 403
                detail: "'profile' requires 'user' in the session context"
                code: transition_refused
    NotFound:
      description: |
        404: `session_not_found` (no such session, or it expired; answered to the admin token
        only), `not_found` (no such screen, graph or route).
      headers:
        X-Request-Id:
          $ref: '#/components/headers/X-Request-Id'
      content:
        application/problem+json:
          schema:
            $ref: '#/components/schemas/Problem'
          examples:
            session_not_found:
              value:
                type: urn:navd:problem:session_not_found
                title: Session not found
                status: 404
                detail: no session '0d41b7e2c95a4f38b6e1a7c3d2f05e9c'
                code: session_not_found
            not_found:
              value:
                type: urn:navd:problem:not_found
                title: Not found
                status: 404
                detail: no screen 'e9' in the session
                code: not_found
    MethodNotAllowed:
      description: '405: `method_not_allowed`; `Allow` lists the methods the route accepts.'
      headers:
        X-Request-Id:
          $ref: '#/components/headers/X-Request-Id'
        Allow:
          $ref: '#/components/headers/Allow'
      content:
        application/problem+json:
          schema:
            $ref: '#/components/schemas/Problem'
          example:
            type: urn:navd:problem:method_not_allowed
            title: Method not allowed
            status: 405
            detail: PUT is not allowed on /v1/sessions/{id}
            code: method_not_allowed
    Conflict:
      description: |
        409: `not_removable` (the intent would remove a scene with `removable: false`),
        `stack_underflow` (the intent would go up past the root or empty the stage).
      headers:
        X-Request-Id:
          $ref: '#/components/headers/X-Request-Id'
      content:
        application/problem+json:
          schema:
            $ref: '#/components/schemas/Problem'
          examples:
            not_removable:
              value:
                type: urn:navd:problem:not_removable
                title: Screen not removable
                status: 409
                detail: "'onboarding' is not removable"
                code: not_removable
            stack_underflow:
              value:
                type: urn:navd:problem:stack_underflow
                title: Stack underflow
                status: 409
                detail: the root screen cannot be exited
                code: stack_underflow
    PreconditionFailed:
      description: '412: `version_conflict` (`If-Match` is not the current version); nothing changed.'
      headers:
        X-Request-Id:
          $ref: '#/components/headers/X-Request-Id'
        ETag:
          description: The session's current version, quoted, when the refusal was an `If-Match` that did not match it.
          schema:
            type: string
            pattern: '^"[1-9][0-9]*"$'
      content:
        application/problem+json:
          schema:
            $ref: '#/components/schemas/Problem'
          example:
            type: urn:navd:problem:version_conflict
            title: Version conflict
            status: 412
            detail: If-Match "1" does not match the current version "2"
            code: version_conflict
    ContentTooLarge:
      description: '413: `payload_too_large` (the body is over the daemon''s limit).'
      headers:
        X-Request-Id:
          $ref: '#/components/headers/X-Request-Id'
      content:
        application/problem+json:
          schema:
            $ref: '#/components/schemas/Problem'
          example:
            type: urn:navd:problem:payload_too_large
            title: Payload too large
            status: 413
            detail: the body is larger than 65536 bytes
            code: payload_too_large
    UnsupportedMediaType:
      description: '415: `unsupported_media_type` (the body''s `Content-Type` is not one the operation takes).'
      headers:
        X-Request-Id:
          $ref: '#/components/headers/X-Request-Id'
      content:
        application/problem+json:
          schema:
            $ref: '#/components/schemas/Problem'
          example:
            type: urn:navd:problem:unsupported_media_type
            title: Unsupported media type
            status: 415
            detail: expected application/json, got text/plain
            code: unsupported_media_type
    SessionUnusable:
      description: |
        422 `unknown_graph`: the session's stored stage no longer fits the graph version it was
        created with (for example an operator removed a scene from a stored graph), or that version
        is not loaded. Only this session is affected; the daemon serves the others.
      headers:
        X-Request-Id:
          $ref: '#/components/headers/X-Request-Id'
      content:
        application/problem+json:
          schema:
            $ref: '#/components/schemas/Problem'
          example:
            type: urn:navd:problem:unknown_graph
            title: Unknown graph
            status: 422
            detail: "the stored session no longer fits graph 'news' version 1: screen e2: scene 'onboarding' is not in graph 'news'"
            code: unknown_graph
    UnprocessableContent:
      description: |
        422: `unknown_scene`, `unknown_transition`, `unknown_graph` (`createSession` on a graph
        that does not exist), `invalid_params` (with `param` when one parameter is at fault),
        `invalid_graph` (with every `issues`), `stack_too_deep`, `idempotency_key_reused`.
      headers:
        X-Request-Id:
          $ref: '#/components/headers/X-Request-Id'
      content:
        application/problem+json:
          schema:
            $ref: '#/components/schemas/Problem'
          examples:
            unknown_scene:
              value:
                type: urn:navd:problem:unknown_scene
                title: Unknown scene
                status: 422
                detail: no scene 'nosuch' in graph 'news'
                code: unknown_scene
            unknown_transition:
              value:
                type: urn:navd:problem:unknown_transition
                title: Unknown transition
                status: 422
                detail: no link 'nosuch' on 'show_news' or in the graph
                code: unknown_transition
            unknown_graph:
              value:
                type: urn:navd:problem:unknown_graph
                title: Unknown graph
                status: 422
                detail: no graph 'shop'
                code: unknown_graph
            invalid_params:
              value:
                type: urn:navd:problem:invalid_params
                title: Invalid parameters
                status: 422
                detail: "'id' of 'show_news' must be int"
                code: invalid_params
                param: id
            invalid_graph:
              value:
                type: urn:navd:problem:invalid_graph
                title: Invalid graph
                status: 422
                detail: the graph has 2 errors
                code: invalid_graph
                issues:
                  - {"pointer": "/scenes/up", "code": "reserved_name", "message": "'up' is reserved", "severity": "error"}
                  - {"pointer": "/links/home/path", "code": "unknown_scene", "message": "no scene 'home'", "severity": "error"}
            stack_too_deep:
              value:
                type: urn:navd:problem:stack_too_deep
                title: Stack too deep
                status: 422
                detail: the stage would be deeper than 32 screens
                code: stack_too_deep
            idempotency_key_reused:
              value:
                type: urn:navd:problem:idempotency_key_reused
                title: Idempotency key reused
                status: 422
                detail: this Idempotency-Key was used with another body
                code: idempotency_key_reused
    InternalError:
      description: '500: `internal`. The body never carries internals.'
      headers:
        X-Request-Id:
          $ref: '#/components/headers/X-Request-Id'
      content:
        application/problem+json:
          schema:
            $ref: '#/components/schemas/Problem'
          example:
            type: urn:navd:problem:internal
            title: Internal error
            status: 500
            detail: internal error
            code: internal
    ServiceUnavailable:
      description: |
        503: `too_many_sessions` (the daemon holds as many sessions as it may) or
        `store_unavailable` (the store cannot take work now, e.g. its disk is full or PostgreSQL is
        down; nothing was changed). Retry after `Retry-After` seconds.
      headers:
        X-Request-Id:
          $ref: '#/components/headers/X-Request-Id'
        Retry-After:
          $ref: '#/components/headers/Retry-After'
      content:
        application/problem+json:
          schema:
            $ref: '#/components/schemas/Problem'
          examples:
            too_many_sessions:
              value:
                type: urn:navd:problem:too_many_sessions
                title: Too many sessions
                status: 503
                detail: the daemon holds its maximum of 100000 sessions
                code: too_many_sessions
            store_unavailable:
              value:
                type: urn:navd:problem:store_unavailable
                title: Store unavailable
                status: 503
                detail: the store cannot take work now; nothing was changed, retry later
                code: store_unavailable
    StoreUnavailable:
      description: |
        503: `store_unavailable`: the store cannot take a read or write now (its disk is full or
        failing, PostgreSQL is down or restarting); nothing was changed. The daemon recovers by
        itself once the store answers again (`/readyz` answers 503 meanwhile); retry after
        `Retry-After` seconds.
      headers:
        X-Request-Id:
          $ref: '#/components/headers/X-Request-Id'
        Retry-After:
          $ref: '#/components/headers/Retry-After'
      content:
        application/problem+json:
          schema:
            $ref: '#/components/schemas/Problem'
          example:
            type: urn:navd:problem:store_unavailable
            title: Store unavailable
            status: 503
            detail: the store cannot take work now; nothing was changed, retry later
            code: store_unavailable

  schemas:
    Problem:
      type: object
      description: |
        An RFC 9457 problem document. `offset` comes only with `invalid_path` (always),
        `param` only with `invalid_params` (when one parameter is at fault) and
        `invalid_request` (when one member, query parameter or header is at fault, or a field is
        over its limit, e.g. `context`), `issues` only with `invalid_graph` (always).
      required: [type, title, status, detail, code]
      additionalProperties: false
      properties:
        type:
          type: string
          description: '`urn:navd:problem:<code>`.'
          pattern: '^urn:navd:problem:[a-z_]+$'
        title:
          type: string
          description: A short summary of the code; the same for every problem of that code.
        status:
          type: integer
          description: The HTTP status.
          minimum: 400
          maximum: 599
        detail:
          type: string
          description: What went wrong with this request, for a human.
        code:
          type: string
          description: The stable error code.
          enum:
            - malformed_json
            - invalid_request
            - invalid_path
            - unauthorized
            - forbidden
            - transition_refused
            - session_not_found
            - not_found
            - method_not_allowed
            - not_removable
            - stack_underflow
            - version_conflict
            - payload_too_large
            - unsupported_media_type
            - unknown_scene
            - unknown_transition
            - unknown_graph
            - invalid_params
            - invalid_graph
            - stack_too_deep
            - idempotency_key_reused
            - too_many_sessions
            - store_unavailable
            - internal
        offset:
          type: integer
          minimum: 0
          description: '`invalid_path`: the character offset where the path stopped parsing.'
        param:
          type: string
          description: |
            `invalid_params`: the parameter at fault. `invalid_request`: the body member (as
            `params.<name>` inside `params`), query parameter or header at fault, or the field over
            its limit.
        issues:
          type: array
          description: '`invalid_graph`: every problem found in the document, errors first.'
          items:
            $ref: '#/components/schemas/GraphIssue'
      allOf:
        - if:
            required: [code]
            properties:
              code:
                const: invalid_path
          then:
            required: [offset]
          else:
            not:
              required: [offset]
        - if:
            required: [code]
            properties:
              code:
                enum: [invalid_params, invalid_request]
          then: true
          else:
            not:
              required: [param]
        - if:
            required: [code]
            properties:
              code:
                const: invalid_graph
          then:
            required: [issues]
          else:
            not:
              required: [issues]

    GraphIssue:
      type: object
      description: One problem found in a graph document.
      required: [pointer, code, message, severity]
      additionalProperties: false
      properties:
        pointer:
          type: string
          description: An RFC 6901 JSON pointer into the document (`""` is the whole document).
        code:
          type: string
          description: |
            A stable code: `invalid_json`, `invalid_type`, `missing_field`, `unknown_field`,
            `invalid_name`, `reserved_name`, `unknown_scene`, `invalid_template`,
            `invalid_start`, `invalid_param_schema`, `invalid_tabs`.
        message:
          type: string
        severity:
          type: string
          enum: [error, warning]
      example: {"pointer": "/scenes/home/tabs", "code": "invalid_tabs", "message": "a tabs scene lists its tab scenes", "severity": "error"}

    ParamValue:
      description: A typed parameter value (the scene's `params` schema decides which type).
      type: [string, integer, number, boolean]

    Params:
      type: object
      description: Parameter name → value.
      additionalProperties:
        $ref: '#/components/schemas/ParamValue'
      example: {"category": 7}

    Screen:
      type: object
      description: One instance of a scene on the stage.
      required: [id, scene, segue, container, params, deps, state]
      additionalProperties: false
      properties:
        id:
          type: string
          pattern: '^e[0-9]+$'
          description: Stable and unique within the session, from the session's counter.
        scene:
          type: string
          description: The scene's name in the graph.
        segue:
          type: string
          enum: ['/', '!', '#']
          description: '`/` pushed, `!` modal, `#` a tab of the tabs screen before it.'
        container:
          type: string
          enum: [navigation, none]
          description: '`navigation` when the screen sits in a navigation container of its own (`/top`, `!/menu`).'
        params:
          $ref: '#/components/schemas/Params'
        deps:
          type: object
          description: Session-context values injected at creation (the scene's `inject`).
        state:
          type: object
          description: Per-screen state, starting from the scene's `state`.
        tabs:
          type: object
          description: On a tabs screen only.
          required: [selected, saved]
          additionalProperties: false
          properties:
            selected:
              type: string
              description: The scene name of the tab on screen.
            saved:
              type: object
              description: The stacks of the tabs the user left, by tab scene name, tab root first.
              additionalProperties:
                type: array
                items:
                  $ref: '#/components/schemas/Screen'

    SessionGraph:
      type: object
      description: The graph and graph version a session runs on.
      required: [name, version]
      additionalProperties: false
      properties:
        name:
          type: string
        version:
          type: integer
          minimum: 1

    SessionView:
      type: object
      description: A session as clients see it.
      required: [id, graph, version, path, screens, context]
      additionalProperties: false
      properties:
        id:
          type: string
        graph:
          $ref: '#/components/schemas/SessionGraph'
        version:
          type: integer
          minimum: 1
          description: Increments by exactly 1 per applied change; the `ETag`.
        path:
          type: string
          description: The stage's canonical path.
        screens:
          type: array
          description: The stage, root first, the visible top last.
          items:
            $ref: '#/components/schemas/Screen'
        context:
          type: object
          description: The session context given at creation.

    Event:
      type: object
      description: One lifecycle event.
      required: [seq, type, screen, scene, transition]
      additionalProperties: false
      properties:
        seq:
          type: integer
          minimum: 1
          description: Per-session sequence number.
        type:
          type: string
          enum:
            - transitionStart
            - awake
            - willAppear
            - didAppear
            - willDisappear
            - didDisappear
            - remove
            - transitionEnd
            - paramsChanged
            - stateChanged
        screen:
          type: [string, 'null']
          description: The screen id; null on `transitionStart`/`transitionEnd`.
        scene:
          type: [string, 'null']
          description: The screen's scene; null on `transitionStart`/`transitionEnd`.
        transition:
          type: integer
          description: The session version this event's change produced.
        from:
          type: string
          description: On `transitionStart`/`transitionEnd`, the path before (`""` when the session starts).
        to:
          type: string
          description: On `transitionStart`, the target path; on `transitionEnd`, the path reached.

    MutationResult:
      type: object
      description: A `SessionView` plus the events the change emitted, in order (empty for a no-op).
      required: [id, graph, version, path, screens, context, events]
      additionalProperties: false
      properties:
        id:
          type: string
        graph:
          $ref: '#/components/schemas/SessionGraph'
        version:
          type: integer
          minimum: 1
        path:
          type: string
        screens:
          type: array
          items:
            $ref: '#/components/schemas/Screen'
        context:
          type: object
        events:
          type: array
          items:
            $ref: '#/components/schemas/Event'

    CreatedSession:
      type: object
      description: A `MutationResult` plus the session's bearer token, shown only here.
      required: [id, graph, version, path, screens, context, events, token]
      additionalProperties: false
      properties:
        id:
          type: string
        graph:
          $ref: '#/components/schemas/SessionGraph'
        version:
          type: integer
          minimum: 1
        path:
          type: string
        screens:
          type: array
          items:
            $ref: '#/components/schemas/Screen'
        context:
          type: object
        events:
          type: array
          items:
            $ref: '#/components/schemas/Event'
        token:
          type: string
          description: The session's bearer token.

    EventLog:
      type: object
      required: [events, next]
      additionalProperties: false
      properties:
        events:
          type: array
          items:
            $ref: '#/components/schemas/Event'
        next:
          type: integer
          minimum: 0
          description: Pass as `after` to read on.

    SessionSummary:
      type: object
      required: [id, graph, version, path]
      additionalProperties: false
      properties:
        id:
          type: string
        graph:
          $ref: '#/components/schemas/SessionGraph'
        version:
          type: integer
          minimum: 1
        path:
          type: string

    SessionList:
      type: object
      required: [sessions]
      additionalProperties: false
      properties:
        sessions:
          type: array
          items:
            $ref: '#/components/schemas/SessionSummary'

    GraphSummary:
      type: object
      required: [name, version, start]
      additionalProperties: false
      properties:
        name:
          type: string
        version:
          type: integer
          minimum: 1
        start:
          type: string
          description: The start path of new sessions.

    GraphList:
      type: object
      required: [graphs]
      additionalProperties: false
      properties:
        graphs:
          type: array
          items:
            $ref: '#/components/schemas/GraphSummary'

    GraphDetail:
      type: object
      required: [name, version, start, document, warnings]
      additionalProperties: false
      properties:
        name:
          type: string
        version:
          type: integer
          minimum: 1
        start:
          type: string
        document:
          type: object
          description: The graph document as uploaded (see `GraphDocument`).
        warnings:
          type: array
          items:
            $ref: '#/components/schemas/GraphIssue'

    GraphUploadResult:
      type: object
      required: [name, version, warnings]
      additionalProperties: false
      properties:
        name:
          type: string
        version:
          type: integer
          minimum: 1
        warnings:
          type: array
          items:
            $ref: '#/components/schemas/GraphIssue'

    Health:
      type: object
      required: [status]
      additionalProperties: false
      properties:
        status:
          type: string
          description: '`ok` (`/healthz`), `ready`, `draining` or `store_unavailable` (`/readyz`).'

    CreateSessionRequest:
      type: object
      additionalProperties: false
      properties:
        graph:
          type: string
          description: The graph name; default the daemon's default graph. Its latest version is used.
        start:
          type: string
          maxLength: 4096
          description: The start path; default the graph's `start`. At most 4096 bytes (400 `invalid_path`).
        context:
          type: object
          description: The session context (`requires` and `inject` read it); at most `--max-context` bytes of JSON (default 4096).

    NavigateRequest:
      type: object
      required: [path]
      additionalProperties: false
      properties:
        path:
          type: string
          maxLength: 4096
          description: |
            A target path (see the operation's description for the grammar). At most 4096 bytes
            of UTF-8; a longer one answers 400 `invalid_path`.

    TransitionRequest:
      type: object
      required: [name]
      additionalProperties: false
      properties:
        name:
          type: string
          description: A link of the top screen's scene, or a global link.
        params:
          $ref: '#/components/schemas/Params'

    ExitRequest:
      type: object
      description: Empty; the body may be left out.
      additionalProperties: false

    BackRequest:
      type: object
      additionalProperties: false
      properties:
        count:
          type: integer
          minimum: 1
          maximum: 2147483647
          default: 1
          description: How many screens to go back, as an integer literal (`2`, not `2.0`).

    MergePatch:
      type: object
      description: An RFC 7396 merge patch; `null` removes a member.

    GraphDocument:
      type: object
      description: |
        A navigation graph (DESIGN §1). Unknown members, unknown targets,
        bad templates and reserved names (`up`) are reported as `issues` with JSON pointers.
      required: [name, start, scenes]
      additionalProperties: false
      properties:
        name:
          type: string
          pattern: '^[A-Za-z0-9_.-]+$'
        start:
          type: string
          minLength: 1
          description: The start path of new sessions.
        description:
          type: string
        version:
          type: integer
          description: Informational; the daemon numbers the versions it stores.
        scenes:
          type: object
          minProperties: 1
          description: Scene name → scene.
          propertyNames:
            pattern: '^[A-Za-z0-9_.-]+$'
          additionalProperties:
            $ref: '#/components/schemas/SceneDefinition'
        links:
          type: object
          description: Global links, available on every screen.
          additionalProperties:
            $ref: '#/components/schemas/LinkDefinition'

    SceneDefinition:
      type: object
      additionalProperties: false
      properties:
        description:
          type: string
        params:
          type: object
          description: |
            Parameter name → spec. A scene without `params` accepts any string parameters;
            a scene with `params` accepts only those, typed.
          propertyNames:
            pattern: '^[A-Za-z0-9_.-]+$'
          additionalProperties:
            type: object
            additionalProperties: false
            properties:
              type:
                type: string
                enum: [string, int, number, bool]
              required:
                type: boolean
                default: false
              default:
                $ref: '#/components/schemas/ParamValue'
              description:
                type: string
        removable:
          type: boolean
          default: true
        container:
          type: string
          enum: [screen, tabs]
          default: screen
        tabs:
          type: array
          description: The tab scene names of a `tabs` scene, first selected by default.
          minItems: 1
          items:
            type: string
        links:
          type: object
          description: Links available while this scene is on top.
          additionalProperties:
            $ref: '#/components/schemas/LinkDefinition'
        inject:
          type: array
          description: Session-context keys copied into the screen's `deps` at creation.
          items:
            type: string
        requires:
          type: array
          description: Session-context keys that must be present to enter the scene.
          items:
            type: string
        state:
          type: object
          description: The initial per-screen state.

    LinkDefinition:
      type: object
      required: [path]
      additionalProperties: false
      properties:
        path:
          type: string
          description: A path template with `{placeholder}`s, e.g. `show_news(id={id})`.
        description:
          type: string

"""#
}
