// What `--help` (or `-h`) prints: the whole usage at the top level, one command's (or one
// subcommand's) usage after a command. The top-level usage is made of the commands' own lines, so the
// two never disagree.
import { API_KEY_SCOPES, OUTPUT_OPTIONS } from '../types.js';
import { VERSION } from '../version.js';

/** Where `npm run dev` serves the API: the CLI's default when MEDIAJOBS_BASE_URL is not set. */
export const DEFAULT_BASE_URL = 'http://127.0.0.1:3000';

/** What a usage error adds to its one line. */
export const USAGE_HINT = "Run 'mediajobs --help' for the commands and their options.";

const { sdr2hdr: VIDEO, audio: AUDIO } = OUTPUT_OPTIONS;

interface CommandHelp {
  /** The usage lines, without the leading `mediajobs `. */
  usage: string[];
  /** What the command does and what its options mean. */
  about: string;
}

const VIDEO_OPTIONS = `  --resolution   output size: ${VIDEO.resolution.join(', ')}
  --peak-nits    mastering peak in nits (default ${VIDEO.defaults.peak_nits})
  --quality      ${VIDEO.quality.join(', ')}
  --mapping      ${VIDEO.mapping.join(', ')}
  --transfer     ${VIDEO.transfer.join(', ')}`;

const TABLE_OR_JSON = "On a terminal it prints a table; with --json, or when piped, the API's JSON.";

/** Each command's help; a command with subcommands has one entry per subcommand (`jobs get`). */
const COMMANDS: Record<string, CommandHelp> = {
  convert: {
    usage: [
      `convert <file|url> --to out.mp4 [--resolution ${VIDEO.resolution.join('|')}] [--peak-nits ${VIDEO.defaults.peak_nits}] [--quality ${VIDEO.quality.join('|')}]`,
      `                  [--mapping ${VIDEO.mapping.join('|')}] [--transfer ${VIDEO.transfer.join('|')}] [--force]`,
      `convert <file|url> --package hls --to out/ [--peak-nits …] [--quality …] [--mapping …] [--transfer …] [--force]`,
    ],
    about: `Converts an SDR video to HDR10: shows the price, stops before uploading when the account cannot
pay, uploads, follows the job and saves the result.

  --to           the output file (.mp4 or .mov); never overwritten unless --force is given
  --package      file (default: one file) or hls: an HLS streaming package (HDR and SDR renditions), saved
                 into the folder --to (master.m3u8, one folder per rendition); the folder must be new or
                 empty unless --force is given, and nothing is written outside it
${VIDEO_OPTIONS}`,
  },
  audio: {
    usage: [`audio <file|url> --lufs ${AUDIO.defaults.target_lufs} [--to out.wav] [--force]`],
    about: `Normalises speech loudness: shows the price, uploads, follows the job and saves the result.

  --lufs         the target loudness in LUFS (default ${AUDIO.defaults.target_lufs})
  --to           the output file (.wav or .m4a; default <name>.normalised.wav); never overwritten unless
                 --force is given`,
  },
  estimate: {
    usage: [
      'estimate <sdr2hdr|audio> <file|url> [--resolution …] [--quality …] [--mapping …] [--transfer …] [--lufs …]',
    ],
    about: `Prints what a job would cost, as JSON. A local file its headers describe is not uploaded.

${VIDEO_OPTIONS}
  --lufs         the target loudness of an audio job`,
  },
  'jobs get': {
    usage: ['jobs get <sdr2hdr|audio> <job_id>'],
    about: `Shows one job: its status, credits, items, outputs and measured checks. ${TABLE_OR_JSON}`,
  },
  'jobs list': {
    usage: ['jobs list <sdr2hdr|audio> [--limit 10] [--status failed] [--starting-after job_…] [--all]'],
    about: `Lists the account's jobs of one API, newest first. ${TABLE_OR_JSON}

  --all          every page, not only the first`,
  },
  'jobs cancel': {
    usage: ['jobs cancel <sdr2hdr|audio> <job_id>'],
    about: 'Cancels a queued or processing job and prints it as it is then.',
  },
  credits: {
    usage: ['credits'],
    about: `Shows the account's balance, what running jobs hold, and this period's spend. ${TABLE_OR_JSON}`,
  },
  ledger: {
    usage: ['ledger [--limit 20] [--all]'],
    about: `Lists the account's credit movements, newest first: grants (+), captures (−), and the holds
and releases of running jobs, which change what is held, not the balance. ${TABLE_OR_JSON}`,
  },
  'keys list': {
    usage: ['keys list [--all]'],
    about: `Lists the account's API keys (their names and prefixes, never the keys). ${TABLE_OR_JSON}`,
  },
  'keys create': {
    usage: [
      `keys create --scopes ${API_KEY_SCOPES.join(',')} [--name "Render farm"] [--expires-at 2026-12-31T00:00:00Z]`,
    ],
    about: 'Creates an API key and prints it once: store it then.',
  },
  'keys revoke': {
    usage: ['keys revoke <key_id>'],
    about: 'Revokes an API key: requests with it are refused from then on.',
  },
  'webhooks list': {
    usage: ['webhooks list'],
    about: `Lists the account's webhook endpoints. ${TABLE_OR_JSON}`,
  },
  'webhooks deliveries': {
    usage: ['webhooks deliveries <we_id> [--limit 20]'],
    about: `Lists an endpoint's deliveries, with their attempts and last error. ${TABLE_OR_JSON}`,
  },
  listen: {
    usage: [
      'listen --forward-to http://localhost:4242/webhooks [--secret whsec_…] [--events job.failed,job.succeeded]',
    ],
    about: `Forwards the account's events to a local URL as signed webhook deliveries, until interrupted.

  --forward-to   where to POST each event
  --secret       the signing secret (default: MEDIAJOBS_WEBHOOK_SECRET, or one made and printed)
  --events       only these event types`,
  },
};

const FOOTER = `Environment: MEDIAJOBS_API_KEY (required), MEDIAJOBS_BASE_URL (default ${DEFAULT_BASE_URL}).
Exit codes: 2 usage, 3 auth, 4 billing, 5 rate limit, 6 invalid request, 7 resource,
8 processing, 9 server, 10 licence, 11 connection or timeout, 1 anything else.
`;

/** A line that starts with a space continues the one before it. */
const usageLines = (help: CommandHelp) =>
  help.usage.map((line) => (line.startsWith(' ') ? `  ${line}` : `  mediajobs ${line}`)).join('\n');

export const USAGE = `mediajobs ${VERSION}

Usage:
${Object.values(COMMANDS).map(usageLines).join('\n')}

On a terminal, credits, ledger, jobs, keys and webhooks print tables; with --json, or when the output
is piped, they print the API's JSON.

convert and audio show the price first (POST /v1/{api}/jobs/estimate) and stop before uploading when
the account cannot pay; they never overwrite an existing output unless --force is given.

Run 'mediajobs <command> --help' for one command's options.

${FOOTER}`;

/** Whether the command line asks for help: `--help` or `-h` anywhere before a `--`. */
export function asksForHelp(args: string[]): boolean {
  const end = args.indexOf('--');
  return (end === -1 ? args : args.slice(0, end)).some((arg) => arg === '--help' || arg === '-h');
}

/**
 * The help for `args` (the command line without --help): one subcommand's when it is named
 * (`jobs get`), every subcommand's of a command (`jobs`), the whole usage otherwise.
 */
export function helpFor(args: string[]): string {
  const words = args.filter((arg) => !arg.startsWith('-'));
  const [command = '', action = ''] = words;
  const exact = COMMANDS[`${command} ${action}`] ?? COMMANDS[command];
  if (exact) return `Usage:\n${usageLines(exact)}\n\n${exact.about}\n\n${FOOTER}`;
  const family = command ? Object.entries(COMMANDS).filter(([name]) => name.startsWith(`${command} `)) : [];
  if (family.length === 0) return USAGE;
  return `Usage:\n${family.map(([, help]) => usageLines(help)).join('\n')}\n\nRun 'mediajobs ${command} <${family.map(([name]) => name.split(' ')[1]).join('|')}> --help' for one of them.\n\n${FOOTER}`;
}

/** The hint after a usage error in a known command: where its own options are told. */
export function commandHint(command: string | undefined): string | undefined {
  const known = Object.keys(COMMANDS).some((name) => name === command || name.startsWith(`${command} `));
  return known ? `Run 'mediajobs ${command} --help' for its options.` : undefined;
}
