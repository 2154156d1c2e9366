import { describe, expect, it } from 'vitest';
import { decideApproval, selectorMatches } from '../../src/core/tool-calls/approval.js';
import type { Tool } from '../../src/shapes/tool.js';
import { llmNameProblem, serverNameProblem } from '../../src/shapes/tool-names.js';
import { ToolRegistry } from '../../src/core/tool-calls/tool-registry.js';

function tool(server: string, name: string): Tool {
  return {
    name,
    server,
    origin: server === 'patchbay' ? 'native' : 'mcp',
    description: name,
    inputSchema: { type: 'object' },
    readOnly: false,
    mutates: true,
    call: async () => ({ outputs: [{ type: 'text', text: '' }], error: false }),
  } as unknown as Tool;
}

describe('serverNameProblem', () => {
  it('reserves eca and patchbay, whole or as a prefix before a non-alphanumeric, in any case', () => {
    for (const n of ['eca', 'ECA', 'Eca', 'eca-x', 'eca_tools', 'patchbay', 'PatchBay', 'patchbay-x', 'patchbay_', 'eca.x']) {
      expect(serverNameProblem(n), n).toMatch(/reserved/);
    }
    for (const n of ['ecology', 'patchbayer', 'myeca', 'github', 'a-b_c']) expect(serverNameProblem(n), n).toBeUndefined();
  });

  it('refuses "__" (it separates server and tool) and characters LLM APIs refuse', () => {
    expect(serverNameProblem('a__b')).toMatch(/"__"/);
    expect(serverNameProblem('my server')).toMatch(/only contain/);
  });
});

describe('llmNameProblem', () => {
  it("follows OpenAI's rule: ^[a-zA-Z0-9_-]{1,64}$", () => {
    expect(llmNameProblem(`a__${'b'.repeat(61)}`)).toBeUndefined();
    expect(llmNameProblem(`a__${'b'.repeat(62)}`)).toMatch(/65 characters; LLM APIs accept at most 64/);
    expect(llmNameProblem('srv__get.file')).toMatch(/only contain/);
  });
});

describe('ToolRegistry names', () => {
  it('skips a tool whose full name does not fit and keeps the rest', () => {
    const r = new ToolRegistry();
    const refused = r.set('mcp:srv', [tool('srv', 'ok'), tool('srv', 'x'.repeat(70)), tool('srv', 'a.b')]);
    expect(refused.map((x) => x.tool)).toEqual([`srv__${'x'.repeat(70)}`, 'srv__a.b']);
    expect(r.all().map((t) => `${t.server}__${t.name}`)).toEqual(['srv__ok']);
  });

  it('refuses a full name another source offers; the earlier keeps it', () => {
    const r = new ToolRegistry();
    r.set('mcp:a', [tool('a', 'b__c')]);
    expect(r.setForChat('chat-1', 'provider:a', [tool('a', 'b__c'), tool('a', 'd')])).toEqual([{ tool: 'a__b__c', reason: expect.stringMatching(/already offered by mcp:a/) }]);
    expect(
      r
        .all('chat-1')
        .filter((t) => t.name === 'b__c')
        .map((t) => t.origin),
    ).toEqual(['mcp']);
    // A source replacing its own tools is no conflict.
    expect(r.set('mcp:a', [tool('a', 'b__c'), tool('a', 'e')])).toEqual([]);
    // A global source cannot take a name a chat's provider holds either.
    r.setForChat('chat-2', 'provider:p', [tool('p', 'x')]);
    expect(r.set('mcp:p', [tool('p', 'x')]).map((x) => x.tool)).toEqual(['p__x']);
  });

  it('a name given twice by one source keeps the first', () => {
    const r = new ToolRegistry();
    const first = tool('s', 't');
    expect(r.set('mcp:s', [first, tool('s', 't')]).map((x) => x.reason)).toEqual(['"s__t" is declared twice']);
    expect(r.all()).toEqual([first]);
  });
});

describe('approval selectors never reach a peer through native names', () => {
  const nativeRead = tool('patchbay', 'read_file');
  it('a bare native name, eca and patchbay match only native tools', () => {
    for (const peer of [tool('eca', 'read_file'), tool('files', 'read_file'), tool('ECA', 'read_file')]) {
      for (const sel of ['read_file', 'eca', 'patchbay', 'eca__read_file', 'patchbay__read_file']) expect(selectorMatches(sel, peer), `${sel} vs ${peer.server}`).toBe(false);
    }
    for (const sel of ['read_file', 'eca', 'patchbay', 'eca__read_file', 'patchbay__read_file']) expect(selectorMatches(sel, nativeRead), sel).toBe(true);
    expect(selectorMatches('files__read_file', tool('files', 'read_file'))).toBe(true);
  });

  it('allow {read_file} with byDefault ask: the native tool is allowed, a peer tool of the same name asks', () => {
    const approval = { byDefault: 'ask' as const, allow: { read_file: {} } };
    expect(decideApproval(nativeRead, {}, approval)).toBe('allow');
    expect(decideApproval(tool('eca', 'read_file'), {}, approval)).toBe('ask');
  });
});
