/** The `patchbay` command. Subcommands load lazily so `patchbay server` starts fast. */
import { explainNativeLoadError, isNativeModuleMismatch } from '../util/native-module.js';
import { commandHelp, overview, wantsHelp } from './help.js';

export async function main(argv: string[]): Promise<void> {
  try {
    await run(argv);
  } catch (e) {
    // Which Node built the SQLite module and how to fix it (or that it is missing): said once, without a stack.
    const why = isNativeModuleMismatch(e) ? e.message : explainNativeLoadError(e, 'better-sqlite3');
    if (why === undefined) throw e;
    process.stderr.write(`${why}\n`);
    process.exitCode = 1;
  }
}

async function run(argv: string[]): Promise<void> {
  const [cmd, ...rest] = argv;
  const help = cmd ? commandHelp(cmd) : undefined;
  if (help && wantsHelp(rest)) {
    process.stdout.write(help.usage);
    return;
  }
  switch (cmd) {
    case 'server': {
      const { runServer } = await import('./server-command.js');
      return runServer(rest);
    }
    case 'acp': {
      const { runAcp } = await import('./acp-command.js');
      return runAcp(rest);
    }
    case 'chat': {
      // The server it starts runs on this Node too: a SQLite module built for another fails here, once.
      const { SqliteStore } = await import('../store/sqlite.js');
      SqliteStore.checkNativeModule();
      const { runChat } = await import('./chat.js');
      return runChat(rest);
    }
    case 'doctor': {
      const { runDoctor } = await import('./doctor-command.js');
      return runDoctor(rest);
    }
    case 'models': {
      const { runModels } = await import('./models-command.js');
      return runModels(rest);
    }
    case 'login': {
      const { runLogin } = await import('./login-command.js');
      return runLogin(rest);
    }
    case 'trust': {
      const { runTrust } = await import('./trust-command.js');
      return runTrust(rest);
    }
    case 'tools': {
      const { runTools } = await import('./tools-command.js');
      return runTools(rest);
    }
    case 'mcp-conformance-client': {
      // Used by the MCP conformance suite (test/e2e/mcp-conformance.test.ts) to drive patchbay's MCP client.
      const { runMcpConformanceClient } = await import('./mcp-conformance-client.js');
      return runMcpConformanceClient(rest);
    }
    case '--version':
    case '-v':
    case 'version': {
      const { versionLine } = await import('../util/version.js');
      process.stdout.write(`${versionLine()}\n`);
      return;
    }
    case undefined:
    case '--help':
    case '-h':
    case 'help':
      process.stdout.write(commandHelp(rest[0] ?? '')?.usage ?? overview()); // `patchbay help chat` too
      return;
    default:
      process.stderr.write(`Unknown command "${cmd}".\n\n${overview()}`);
      process.exitCode = 2;
  }
}
