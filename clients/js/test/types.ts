// Type-checked by `tsc -p clients/js` (never run): the declarations in use, as an app writes them.

import { NavClient, NavProblem, NavClientError, type WatchMessage, type LifecycleEvent, type SessionView, type BatchItem } from "../navd-client.js";

async function drive(): Promise<void> {
  const navd = new NavClient({ url: "http://127.0.0.1:8080", retries: 2 });
  const created = await navd.createSession({ graph: "news", context: { user: "u1" } });
  const token: string = created.watchToken;
  const session = created.session;
  const moved = await session.link("news", { category: 2 }, { ifMatch: created.version, idempotencyKey: "k" });
  const first: LifecycleEvent | undefined = moved.events[0];
  const top: string = moved.screens[moved.screens.length - 1].id;
  await session.params(top, { category: 3 });
  await session.state(top, { seen: true });
  await session.command(top, "type", { text: "hi" });
  await session.context({ locale: "ja" });
  const items: BatchItem[] = [{ navigate: "^/top" }, { link: "news", params: { category: 1 } }, { back: 1, result: null }];
  await session.batch(items);
  await session.back({ count: 1, result: { picked: 3 } });
  await session.exit({ result: [1, 2] });
  await session.upgrade({ version: 2 });
  const past: SessionView = await session.view({ version: 1 });
  const history = await session.history({ after: past.version, limit: 10 });
  const kinds: string[] = history.changes.map((change) => change.kind);
  const page = await session.events({ after: 0, limit: 100, wait: 5 });
  try {
    await session.navigate("^/top/settings");
  } catch (error) {
    if (error instanceof NavProblem && error.code === "confirmation_required" && error.confirmation) {
      await session.confirm(error.confirmation);
    } else if (error instanceof NavProblem) {
      const where: number | null = error.offset ?? error.index;
      console.log(error.status, error.param, error.pointer, error.reasons, where, error.retryAfter);
    } else if (error instanceof NavClientError) {
      console.log(error.code);
    }
  }
  const controller = new AbortController();
  for await (const message of navd.session(created.id, token).watch({ after: page.next, signal: controller.signal })) {
    const handled: WatchMessage = message;
    if (message.type === "view") console.log(message.view.actions.links, message.view.version);
    else if (message.type === "lifecycle") console.log(message.event.seq, message.event.type);
    else console.log(message.reason, handled, first, kinds);
  }
  await session.delete({ ifMatch: "*" });
}

void drive;
