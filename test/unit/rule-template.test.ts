/** ECA docs/config/rules.md "Condition variables": the Selmer tags rules use (core/agent-files/rule-template.ts). */
import { describe, expect, it } from 'vitest';
import { compileTemplate, type Template } from '../../src/core/agent-files/rule-template.js';

function compiled(text: string): Template {
  const t = compileTemplate(text);
  if (typeof t === 'string') throw new Error(t);
  return t;
}

describe('rule templates', () => {
  it('if / elif / else / endif, not, nesting and variables', () => {
    const t = compiled('A{% if isSubagent %}S{% elif other %}O{% else %}M{% if not x %}!{% endif %}{% endif %} in {{ workspaceRoots }}{{missing}}.');
    expect(t({ isSubagent: true, workspaceRoots: '/w' })).toBe('AS in /w.');
    expect(t({ other: 'yes', workspaceRoots: '/w' })).toBe('AO in /w.');
    expect(t({ x: true })).toBe('AM in .');
    expect(t({})).toBe('AM! in .');
  });

  it('text without tags is returned as is', () => {
    expect(compiled('plain {not a tag} text')({})).toBe('plain {not a tag} text');
  });

  it('says why a template cannot be rendered', () => {
    expect(compileTemplate('{% if a %}x')).toBe('"{% if %}" without its "{% endif %}"');
    expect(compileTemplate('x{% endif %}')).toBe('"{% endif %}" without an open "{% if %}"');
    expect(compileTemplate('{% if a %}{% else %}{% else %}{% endif %}')).toBe('"{% else %}" without an open "{% if %}"');
    expect(compileTemplate('{% for x in y %}{% endfor %}')).toMatch(/^unsupported tag "\{% for x in y %\}"/);
    expect(compileTemplate('{% if a == b %}{% endif %}')).toMatch(/^unsupported condition "a == b"/);
    expect(compileTemplate('{{ a|upper }}')).toBe('unsupported expression "{{ a|upper }}"');
  });
});
