// Types of navd-client.js: openapi.yaml's shapes under their own names.

/** Any JSON value (a context, a state, a result). */
export type JSONValue = string | number | boolean | null | JSONValue[] | { [key: string]: JSONValue };
export type JSONObject = { [key: string]: JSONValue };

/** A code navd may answer; a code this client does not know stays a plain string. */
export type KnownProblemCode =
  | "malformed_json" | "invalid_request" | "invalid_path" | "unauthorized" | "forbidden" | "transition_refused"
  | "session_not_found" | "not_found" | "method_not_allowed" | "not_removable" | "stack_underflow"
  | "version_conflict" | "payload_too_large" | "unsupported_media_type" | "unknown_scene" | "unknown_transition"
  | "unknown_graph" | "invalid_params" | "invalid_graph" | "stack_too_deep" | "idempotency_key_reused"
  | "unknown_command" | "command_refused" | "confirmation_required" | "upgrade_refused" | "too_many_sessions"
  | "store_unavailable" | "malformed_request" | "too_many_requests" | "over_capacity" | "shutting_down"
  | "unsupported_transfer_coding" | "graph_in_use" | "cursor_expired" | "version_expired" | "internal";
export type ProblemCode = KnownProblemCode | (string & {});

export type ParamValue = string | number | boolean;
export type Params = { [name: string]: ParamValue };

export interface Screen {
  id: string;
  scene: string;
  segue: "/" | "!" | "#";
  container: "navigation" | "none";
  params: Params;
  deps: JSONObject;
  state: JSONObject;
  tabs?: { selected: string; saved: { [tab: string]: Screen[] } };
}

export interface Actions {
  links: { name: string; params: string[] }[];
  exit: boolean;
  back: number;
}

export interface SessionView {
  id: string;
  graph: { name: string; version: number };
  version: number;
  path: string;
  pending?: string;
  screens: Screen[];
  context: JSONObject;
  actions: Actions;
}

export type KnownEventType =
  | "transitionStart" | "awake" | "willAppear" | "didAppear" | "willDisappear" | "didDisappear" | "remove"
  | "transitionEnd" | "paramsChanged" | "stateChanged" | "contextChanged" | "result" | "graphChanged";

export interface LifecycleEvent {
  seq: number;
  /** A type this client does not know stays a plain string. */
  type: KnownEventType | (string & {});
  screen: string | null;
  scene: string | null;
  transition: number;
  from?: string;
  to?: string;
  keys?: string[];
  command?: string;
  value?: JSONValue;
  fromVersion?: number;
  toVersion?: number;
}

export interface MutationResult extends SessionView {
  events: LifecycleEvent[];
}

export interface CreatedSession extends MutationResult {
  token: string;
  watchToken: string;
  /** The session, acted on with its token. */
  session: NavSession;
}

export interface EventLog {
  events: LifecycleEvent[];
  next: number;
}

export interface FeedStage {
  path: string | null;
  screen: { id: string; scene: string; params: Params } | null;
}

export interface FeedRecord {
  id: string;
  cursor: string;
  form: "analytics" | "full";
  time: string;
  schema: 1;
  session: string;
  graph: { name: string; version: number };
  version: number;
  kind: "create" | "navigate" | "link" | "back" | "exit" | "params" | "state" | "command" | "context" | "batch" | "confirm" | "upgrade" | "end" | (string & {});
  reason?: "deleted" | "expired";
  redirected?: string;
  resumed?: true;
  intent: JSONObject | null;
  from?: FeedStage;
  to: FeedStage;
  added: string[];
  removed: string[];
  events: string[];
  attributes: JSONObject;
}

export interface HistoryPage {
  changes: FeedRecord[];
  oldest: number | null;
  next: number;
}

/** One intent in the batch-item form. */
export type BatchItem =
  | { navigate: string }
  | { link: string; params?: Params }
  | { exit: { result?: JSONValue } }
  | { back: number; result?: JSONValue }
  | { params: Params }
  | { state: { screen: string; patch: JSONObject } }
  | { command: { screen: string; name: string; args?: JSONObject } }
  | { context: JSONObject };

export interface Confirmation {
  token: string;
  screen: string;
  intent: BatchItem | { intents: BatchItem[] };
}

export interface GraphIssue {
  pointer: string;
  code: string;
  message: string;
  severity: "error" | "warning";
}

export interface GraphSummary {
  name: string;
  [member: string]: JSONValue;
}

/** A refusal by navd, its problem document's members each a property. */
export class NavProblem extends Error {
  constructor(status: number, body: unknown, headers?: Headers | null);
  name: "NavProblem";
  status: number;
  code: ProblemCode;
  type: string | null;
  title: string | null;
  detail: string;
  offset: number | null;
  param: string | null;
  pointer: string | null;
  index: number | null;
  confirmation: Confirmation | null;
  reasons: { pointer: string; message: string }[] | null;
  issues: GraphIssue[] | null;
  /** `Retry-After`, in seconds. */
  retryAfter: number | null;
  wwwAuthenticate: string | null;
  requestId: string | null;
  /** The answer's body as parsed (null when there was none or it did not parse). */
  body: unknown;
}

export type NavClientErrorCode = "network" | "invalid_json" | "line_too_long" | "invalid_data" | "unexpected_response";

/** A failure on this side of navd's answers. */
export class NavClientError extends Error {
  constructor(code: NavClientErrorCode, message: string, cause?: unknown);
  name: "NavClientError";
  code: NavClientErrorCode;
  /** The message again, as a NavProblem has it. */
  detail: string;
}

export const MAX_LINE_BYTES: number;

export type StreamItem = { event: string; data: string; id: string | null } | { comment: string } | { retry: number };

export class EventStreamParser {
  constructor(options?: { maxLineBytes?: number });
  push(bytes: Uint8Array): StreamItem[];
}

export interface NavClientOptions {
  /** navd's base URL; "" for the page's own origin. */
  url?: string;
  /** The backend or admin token, for creating sessions and the admin routes. */
  token?: string | null;
  /** Retries after a network error or a 429/503 with `Retry-After` (3). */
  retries?: number;
  /** The first retry's delay in ms (250), doubled each time. */
  retryDelay?: number;
  /** The longest delay in ms (10,000): a longer `Retry-After` is not waited for. */
  maxRetryDelay?: number;
  fetch?: typeof fetch;
}

export interface CallOptions {
  signal?: AbortSignal;
}

export interface ChangeOptions extends CallOptions {
  /** A version (sent as `"N"`) or an `If-Match` value (`*`, a list of entity tags). */
  ifMatch?: number | string;
  /** Made up by the client when not given; kept across its own retries. */
  idempotencyKey?: string;
}

export interface RequestOptions extends ChangeOptions {
  token?: string | null;
  body?: unknown;
  contentType?: string;
  accept?: string;
  text?: boolean;
}

export interface Answer<T> {
  status: number;
  headers: Headers;
  body: T;
}

export class NavClient {
  constructor(options?: NavClientOptions);
  url: string;
  token: string | null;
  request<T = unknown>(method: string, path: string, options?: RequestOptions): Promise<Answer<T>>;
  createSession(request?: { graph?: string; start?: string; context?: JSONObject } & ChangeOptions): Promise<CreatedSession>;
  session(id: string, token?: string | null): NavSession;
  graphs(options?: CallOptions): Promise<{ graphs: GraphSummary[] }>;
  graph(name: string, options?: { version?: number } & CallOptions): Promise<JSONObject>;
  diagram(name: string, options?: { version?: number; format?: "svg" | "dot" | "mermaid"; traffic?: string } & CallOptions): Promise<string>;
  /** Views by scene and edge: the admin token (the client's, or `token`). */
  traffic(name: string, options?: { since?: string; until?: string; token?: string | null } & CallOptions): Promise<JSONObject>;
}

export type WatchMessage =
  | { type: "view"; view: SessionView }
  | { type: "lifecycle"; event: LifecycleEvent }
  | { type: "end"; reason: "deleted" | "expired" | (string & {}) };

export interface WatchOptions {
  /** Resume after this event seq: every retained event after it comes first. */
  after?: number;
  signal?: AbortSignal;
  /** Connections in a row that may fail before the error is thrown (5). */
  maxFailures?: number;
  /** Told `connecting` before each connection, `live` once its opening view came. */
  onState?: (state: "connecting" | "live") => void;
}

export class NavSession {
  constructor(client: NavClient, id: string, token?: string | null);
  client: NavClient;
  id: string;
  token: string | null;
  view(options?: { version?: number } & CallOptions): Promise<SessionView>;
  delete(options?: ChangeOptions): Promise<null>;
  navigate(path: string, options?: ChangeOptions): Promise<MutationResult>;
  link(name: string, params?: Params, options?: ChangeOptions): Promise<MutationResult>;
  back(options?: { count?: number; result?: JSONValue } & ChangeOptions): Promise<MutationResult>;
  exit(options?: { result?: JSONValue } & ChangeOptions): Promise<MutationResult>;
  params(screen: string, params: Params, options?: ChangeOptions): Promise<MutationResult>;
  state(screen: string, patch: JSONObject, options?: ChangeOptions): Promise<MutationResult>;
  command(screen: string, name: string, args?: JSONObject, options?: ChangeOptions): Promise<MutationResult>;
  context(patch: JSONObject, options?: ChangeOptions): Promise<MutationResult>;
  batch(intents: BatchItem[], options?: ChangeOptions): Promise<MutationResult>;
  confirm(confirmation: Confirmation | string, options?: ChangeOptions): Promise<MutationResult>;
  upgrade(options?: { version?: number } & ChangeOptions): Promise<MutationResult>;
  events(options?: { after?: number; limit?: number; wait?: number } & CallOptions): Promise<EventLog>;
  history(options?: { after?: number; limit?: number } & CallOptions): Promise<HistoryPage>;
  watch(options?: WatchOptions): AsyncIterableIterator<WatchMessage>;
}
