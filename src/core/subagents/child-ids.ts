/**
 * The id of the child chat a `spawn_agent` call runs in. ECA names it after the tool call
 * (agent.clj `->subagent-chat-id`: `subagent-<toolCallId>`), but the tool call id is the
 * provider's: some OpenAI-compatible servers repeat ids across answers (`call_0` each time), so a
 * second call would land in the first child's chat, under the first one's parent. An id already
 * taken gets a suffix (`subagent-<toolCallId>-2`, …).
 *
 * Decided once per call: the `toolCallRun` details (before the call runs) and the run itself must
 * name the same chat, as eca-emacs nests the child's contents by that id.
 */
export class ChildIds {
  /** Ids decided for calls not started yet, by parent chat and tool call. */
  private readonly pending = new Map<string, string>();

  constructor(private readonly taken: (chatId: string) => boolean) {}

  /** The id for this call (the same on every ask until `claim`). */
  peek(parentId: string, toolCallId: string): string {
    const key = `${parentId}\u0000${toolCallId}`;
    let id = this.pending.get(key);
    if (id === undefined) {
      id = this.free(`subagent-${toolCallId}`);
      this.pending.set(key, id);
    }
    return id;
  }

  /** The id for this call, now used: the next call with the same tool call id gets another. */
  claim(parentId: string, toolCallId: string): string {
    const id = this.peek(parentId, toolCallId);
    this.pending.delete(`${parentId}\u0000${toolCallId}`);
    return id;
  }

  private free(base: string): string {
    const reserved = new Set(this.pending.values());
    const usable = (id: string) => !reserved.has(id) && !this.taken(id);
    if (usable(base)) return base;
    for (let n = 2; ; n++) if (usable(`${base}-${n}`)) return `${base}-${n}`;
  }
}
