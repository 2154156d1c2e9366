/**
 * What the agent runtime's file-based features (rules, skills, custom commands, agents, hooks)
 * report: the bad files they skipped, and a summary each for `doctor`. A problem is shown in a
 * chat once, as a notice at its next prompt (../chat/chats.ts), and listed by `doctor` until it is fixed.
 */
export class RuntimeBoard {
  private readonly problemsBySource = new Map<string, string[] | (() => string[])>();
  private readonly summaries = new Map<string, () => string[]>();

  /**
   * Replaces the source's problems, e.g. `skills: .agents/skills/x/SKILL.md: no front-matter`. A
   * function is asked at each read instead: a source that reads its files lazily (skills, custom
   * commands) checks them then, so a chat hears of a file broken since its last prompt at the next.
   */
  setProblems(source: string, problems: string[] | (() => string[])): void {
    if (typeof problems === 'function' || problems.length) this.problemsBySource.set(source, problems);
    else this.problemsBySource.delete(source);
  }

  problems(): string[] {
    return [...this.problemsBySource.values()].flatMap((p) => {
      if (typeof p !== 'function') return p;
      try {
        return p();
      } catch (e) {
        return [`(problem check failed: ${e instanceof Error ? e.message : String(e)})`];
      }
    });
  }

  /** Lines for `doctor` (e.g. `Rules (3): …`), asked for each report. */
  setSummary(source: string, lines: () => string[]): void {
    this.summaries.set(source, lines);
  }

  summary(): string[] {
    return [...this.summaries.values()].flatMap((f) => {
      try {
        return f();
      } catch (e) {
        return [`(report failed: ${e instanceof Error ? e.message : String(e)})`];
      }
    });
  }
}
