/**
 * The part of Selmer (the template language ECA renders rules with, docs/config/rules.md
 * "Condition variables") that rules use: `{% if x %}`, `{% if not x %}`, `{% elif x %}`,
 * `{% else %}`, `{% endif %}` and `{{ x }}`. A variable that is not set is false and prints as
 * nothing, as in Selmer. Compiled once per rule file; text without tags costs nothing to render.
 */

export type TemplateVars = Readonly<Record<string, string | boolean | undefined>>;
export type Template = (vars: TemplateVars) => string;

type Node = { kind: 'text'; text: string } | { kind: 'var'; name: string } | { kind: 'if'; branches: Array<{ test?: Test; body: Node[] }> };
type Test = { name: string; negate: boolean };

const TAG = /\{%-?\s*([\s\S]*?)\s*-?%\}|\{\{\s*([\s\S]*?)\s*\}\}/g;
const NAME = /^[A-Za-z_][A-Za-z0-9_.-]*$/;

function test(expr: string): Test | string {
  const m = /^(not\s+)?(\S+)$/.exec(expr.trim());
  if (!m || !NAME.test(m[2])) return `unsupported condition "${expr}" (a variable, or "not" and a variable)`;
  return { name: m[2], negate: Boolean(m[1]) };
}

/** The template, or why it cannot be rendered (a string). */
export function compileTemplate(text: string): Template | string {
  if (!text.includes('{%') && !text.includes('{{')) return () => text;
  const root: Node[] = [];
  // Open `if`s, innermost last, each with the body being filled.
  const open: Array<{ node: Extract<Node, { kind: 'if' }>; elseSeen: boolean }> = [];
  const body = (): Node[] => (open.length ? open[open.length - 1].node.branches.at(-1)!.body : root);
  let last = 0;
  for (const m of text.matchAll(TAG)) {
    if (m.index > last) body().push({ kind: 'text', text: text.slice(last, m.index) });
    last = m.index + m[0].length;
    if (m[2] !== undefined) {
      if (!NAME.test(m[2])) return `unsupported expression "{{ ${m[2]} }}"`;
      body().push({ kind: 'var', name: m[2] });
      continue;
    }
    const [word, ...rest] = m[1].split(/\s+/);
    const arg = rest.join(' ');
    if (word === 'if' || word === 'elif') {
      const t = test(arg);
      if (typeof t === 'string') return t;
      if (word === 'if') {
        const node: Extract<Node, { kind: 'if' }> = { kind: 'if', branches: [{ test: t, body: [] }] };
        body().push(node);
        open.push({ node, elseSeen: false });
      } else {
        const top = open.at(-1);
        if (!top || top.elseSeen) return '"{% elif %}" without an open "{% if %}"';
        top.node.branches.push({ test: t, body: [] });
      }
    } else if (word === 'else') {
      const top = open.at(-1);
      if (!top || top.elseSeen) return '"{% else %}" without an open "{% if %}"';
      top.elseSeen = true;
      top.node.branches.push({ body: [] });
    } else if (word === 'endif') {
      if (!open.pop()) return '"{% endif %}" without an open "{% if %}"';
    } else {
      return `unsupported tag "{% ${m[1]} %}" (rules support if, elif, else, endif and {{ variable }})`;
    }
  }
  if (open.length) return '"{% if %}" without its "{% endif %}"';
  if (last < text.length) root.push({ kind: 'text', text: text.slice(last) });
  return (vars) => render(root, vars);
}

function render(nodes: Node[], vars: TemplateVars): string {
  let out = '';
  for (const n of nodes) {
    if (n.kind === 'text') out += n.text;
    else if (n.kind === 'var') out += vars[n.name] === undefined || vars[n.name] === false ? '' : String(vars[n.name]);
    else {
      const hit = n.branches.find((b) => !b.test || Boolean(vars[b.test.name]) !== b.test.negate);
      if (hit) out += render(hit.body, vars);
    }
  }
  return out;
}
