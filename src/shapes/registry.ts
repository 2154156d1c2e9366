/**
 * What a peer needs from the runtime's registries: a place to put the tools and commands it
 * produces, per source (a peer never sees the other peers' entries).
 */
import type { Command } from './command.js';
import type { Tool } from './tool.js';

/** A tool the registry would not take (a clashing or invalid name), with why. */
export interface ToolRefusal {
  /** The tool's name as its source gave it. */
  tool: string;
  reason: string;
}

export interface ToolSink {
  /** Replaces the tools of `source` (e.g. `mcp:github`); an empty list removes them. Returns the ones refused, with why. */
  set(source: string, tools: Tool[]): ToolRefusal[];
}

export interface CommandSink {
  set(source: string, commands: Command[]): void;
}
