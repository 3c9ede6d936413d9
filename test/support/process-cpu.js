// CPU seconds (user + system) used by a process and everything it started: its own time, the time of
// the children it has already waited for (the kernel adds those to the parent's cutime/cstime), and the
// time of each descendant still running. The difference of two readings is what a stretch of work cost
// the machine, whatever else the machine runs — a wall-clock time on a loaded machine says more about the
// load than about the code (docs/development.md, "Where the time goes"). Linux only (/proc); elsewhere 0.
'use strict';

const { execFileSync } = require('node:child_process');
const { readdirSync, readFileSync } = require('node:fs');

let ticksPerSecond;
function clockTicks() {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

/** pid → { ppid, ticks } for every process readable in /proc; ticks = utime + stime + cutime + cstime. */
function processTable() {
  const table = new Map();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    let stat;
    try {
      stat = readFileSync(`/proc/${name}/stat`, 'utf8');
    } catch {
      continue; // ended while we looked
    }
    // The command name (field 2) is in parentheses and may hold spaces: the fields after its last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // fields[0] is field 3 (state): ppid is field 4, utime…cstime fields 14–17.
    const ticks = Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
    table.set(Number(name), { ppid: Number(fields[1]), ticks });
  }
  return table;
}

/** CPU seconds used so far by `pid` and its descendants (its reaped children included). */
function treeCpuSeconds(pid = process.pid) {
  if (process.platform !== 'linux') return 0;
  const table = processTable();
  const children = new Map();
  for (const [child, { ppid }] of table) {
    if (!children.has(ppid)) children.set(ppid, []);
    children.get(ppid).push(child);
  }
  let ticks = 0;
  const queue = [pid];
  while (queue.length) {
    const next = queue.pop();
    ticks += table.get(next)?.ticks ?? 0;
    queue.push(...(children.get(next) ?? []));
  }
  return ticks / clockTicks();
}

module.exports = { treeCpuSeconds };
