/** What every façade is started with: its stdio pair and the process's settings (both ECA and ACP). */
import type { Readable, Writable } from 'node:stream';
import type { Config } from '../../config/schema.js';

export interface ServerOptions {
  input: Readable;
  output: Writable;
  env?: NodeJS.ProcessEnv;
  configFile?: string;
  logLevel?: Config['logLevel'];
  /** Called with the exit code when the client sends `exit` or goes away. */
  onExit: (code: number) => void;
}
