// The command line's grammar on node:util's parseArgs: flags as --name value or --name=value
// (upstream's pflag forms; one-letter flags also as -x), a subcommand as the first positional,
// --help and --version anywhere. Every mistake is a one-line error, as the kubelet's.
import { parseArgs } from 'node:util';

export interface Flag {
  /** 'boolean': pflag's bool, --name alone is true, or --name=false (never --name false); 'strings': every occurrence kept, in order. */
  type: 'string' | 'number' | 'strings' | 'boolean';
  describe: string;
  /** The value's kind in the help, when not the type's (upstream's: duration, mapStringString, ...). */
  typeName?: string;
  default?: string | number | readonly string[];
  choices?: readonly string[];
  required?: true;
}
export type Flags = Record<string, Flag>;

export interface Command<F extends Flags = Flags> {
  /** After the program's name, e.g. 'join <endpoint>'; '' for the default command. */
  usage: string;
  describe: string;
  positionals: readonly { name: string; describe: string }[];
  flags: F;
}

export interface Program<C extends Record<string, Command>> {
  name: string;
  /** The default command's usage line and description. */
  usage: string;
  describe: string;
  version: string;
  commands: C;
  defaultCommand: keyof C & string;
}

type Value<F extends Flag> = F extends { choices: readonly (infer C)[] }
  ? C
  : F['type'] extends 'number'
    ? number
    : F['type'] extends 'strings'
      ? string[]
      : F['type'] extends 'boolean'
        ? boolean
        : string;

/** A command's flags as parsed: set, defaulted or required ones always present. */
export type Values<F extends Flags> = {
  [K in keyof F]: F[K] extends { default: unknown } | { required: true } ? Value<F[K]> : Value<F[K]> | undefined;
};

export type CommandLine<C extends Record<string, Command>> =
  | { output: string }
  | {
      [K in keyof C]: {
        command: K;
        positionals: string[];
        values: Values<C[K]['flags']>;
        /** The flags as given, in order, each occurrence's text (a bool one "true" or "false"): what /flagz renders. */
        given: [name: string, text: string][];
      };
    }[keyof C];

/** The command to run with its flags, or the help or version text to print; throws on a mistake. */
export function parseCommandLine<C extends Record<string, Command>>(p: Program<C>, args: string[]): CommandLine<C> {
  // One pass with every command's flags finds the positionals, the first of which may name the command.
  const every: Flags = Object.assign({}, ...Object.values(p.commands).map((c) => c.flags));
  const options = Object.fromEntries(
    Object.entries(every).map(([name, f]) => [
      name,
      {
        type: f.type === 'boolean' ? ('boolean' as const) : ('string' as const),
        multiple: f.type === 'strings',
        ...(name.length === 1 ? { short: name } : {}),
      },
    ]),
  );
  const { tokens } = parseArgs({
    args,
    options: { ...options, help: { type: 'boolean' }, version: { type: 'boolean' } },
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  const positionals = tokens.flatMap((t) => (t.kind === 'positional' ? [t.value] : []));
  const first = positionals[0];
  const name =
    first !== undefined && first !== p.defaultCommand && Object.hasOwn(p.commands, first) ? positionals.shift()! : p.defaultCommand;
  const cmd = p.commands[name]!;
  const given = (flag: string) => tokens.some((t) => t.kind === 'option' && t.name === flag);
  // 'help' as a command too, as yargs answered it.
  if (given('help') || (name === p.defaultCommand && first === 'help')) return { output: helpText(p, name) };
  if (given('version')) return { output: `${p.version}\n` };

  const values: Record<string, unknown> = {};
  const givenFlags: [string, string][] = [];
  const unknown = new Set<string>();
  for (const t of tokens) {
    if (t.kind !== 'option') continue;
    const flag = Object.hasOwn(cmd.flags, t.name) ? cmd.flags[t.name]! : undefined;
    if (!flag) {
      unknown.add(args[t.index]!.split('=')[0]!); // as typed: -abc stays one
      continue;
    }
    if (flag.type === 'boolean') {
      values[t.name] = t.value === undefined || parseBool(t.value, t.rawName);
      givenFlags.push([t.name, String(values[t.name])]);
      continue;
    }
    if (t.value === undefined) throw new Error(`flag needs an argument: ${t.rawName}`);
    // pflag also reads -v=3 as 3.
    const text = t.rawName.length === 2 && t.inlineValue && t.value.startsWith('=') ? t.value.slice(1) : t.value;
    givenFlags.push([t.name, text]);
    if (flag.type === 'strings') values[t.name] = [...((values[t.name] as string[] | undefined) ?? []), text];
    else if (flag.type === 'number') {
      if (!/^-?\d+$/.test(text)) throw new Error(`invalid argument "${text}" for "${t.rawName}" flag: not an integer`);
      values[t.name] = Number(text);
    } else values[t.name] = text;
  }
  for (const extra of positionals.slice(cmd.positionals.length)) unknown.add(extra);
  if (unknown.size) throw new Error(`Unknown argument${unknown.size > 1 ? 's' : ''}: ${[...unknown].join(', ')}`);
  if (positionals.length < cmd.positionals.length)
    throw new Error(`Not enough non-option arguments: got ${positionals.length}, need at least ${cmd.positionals.length}`);
  for (const [flagName, f] of Object.entries(cmd.flags)) {
    if (values[flagName] === undefined) {
      if (f.required) throw new Error(`Missing required argument: ${flagName}`);
      values[flagName] = Array.isArray(f.default) ? [...f.default] : f.default;
    }
    const v = values[flagName];
    if (f.choices && v !== undefined && !f.choices.includes(v as string))
      throw new Error(`Invalid values: Argument: ${flagName}, Given: "${v}", Choices: ${f.choices.map((c) => `"${c}"`).join(', ')}`);
  }
  return { command: name, positionals, values, given: givenFlags } as CommandLine<C>;
}

/** strconv.ParseBool, as pflag's bool flags. */
function parseBool(text: string, flag: string): boolean {
  if (['1', 't', 'T', 'true', 'TRUE', 'True'].includes(text)) return true;
  if (['0', 'f', 'F', 'false', 'FALSE', 'False'].includes(text)) return false;
  throw new Error(`invalid argument "${text}" for "${flag}" flag: strconv.ParseBool: parsing "${text}": invalid syntax`);
}

const WIDTH = 80;

/** yargs' layout: usage, description, the commands (top level only), positionals, flags with their type and default. */
export function helpText<C extends Record<string, Command>>(p: Program<C>, name: keyof C & string): string {
  const cmd = p.commands[name]!;
  const top = name === p.defaultCommand;
  const out = [`${p.name} ${top ? p.usage : cmd.usage}`, '', ...wrap(words(top ? p.describe : cmd.describe), WIDTH)];
  if (top) {
    const rows = Object.entries(p.commands).map(
      ([n, c]): Row => [
        `${p.name}${c.usage ? ` ${c.usage}` : ''}`,
        [...words(c.describe), ...(n === p.defaultCommand ? ['[default]'] : [])],
      ],
    );
    out.push('', 'Commands:', ...table(rows));
  }
  if (cmd.positionals.length)
    out.push('', 'Positionals:', ...table(cmd.positionals.map((a): Row => [a.name, [...words(a.describe), '[string]', '[required]']])));
  const flags: Row[] = [
    ['    --help', ['Show', 'help', '[boolean]']],
    ['    --version', ['Show', 'version', 'number', '[boolean]']],
    ...Object.entries(cmd.flags).map(
      ([n, f]): Row => [n.length === 1 ? `-${n}, --${n}` : `    --${n}`, [...words(f.describe), ...annotations(f)]],
    ),
  ];
  out.push('', 'Options:', ...table(flags));
  return `${out.join('\n')}\n`;
}

/** A left column and the words of its text; an annotation such as [default: "x"] is one word. */
type Row = [string, string[]];

const words = (text: string) => text.split(' ');

function annotations(f: Flag): string[] {
  return [
    f.choices
      ? `[choices: ${f.choices.map((c) => JSON.stringify(c)).join(', ')}]`
      : `[${f.typeName ?? (f.type === 'strings' ? 'array' : f.type)}]`,
    ...(f.default !== undefined ? [`[default: ${JSON.stringify(f.default)}]`] : []),
    ...(f.required ? ['[required]'] : []),
  ];
}

// The left column's widest: a longer flag name has its text on the lines below it.
const LEFT_MAX = 32;

function table(rows: Row[]): string[] {
  const left = Math.min(LEFT_MAX, Math.max(...rows.map(([l]) => l.length)));
  // A continuation too long for the column (a long default) ends at the right margin instead, as in yargs.
  const lay = (l: string, line: string, i: number) =>
    i && left + 4 + line.length > WIDTH ? line.padStart(WIDTH) : `  ${(i ? '' : l).padEnd(left)}  ${line}`;
  return rows.flatMap(([l, text]) => {
    const lines = wrap(text, WIDTH - left - 4);
    return l.length > left ? [`  ${l}`, ...lines.map((line) => lay('', line, 1))] : lines.map((line, i) => lay(l, line, i));
  });
}

function wrap(text: string[], width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  return [...lines, line];
}
