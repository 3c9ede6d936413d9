// The CPUs this process may run on, when an operator confined it to fewer than the machine has
// (`taskset`, a container's cpuset): the worker's encoder must stay inside them.
//
// Why the encoder needs telling: x265 builds one thread pool per NUMA node and pins the pool's threads
// to every CPU of the node (libnuma), which undoes `taskset`. A worker pinned to core 0 then encodes on
// every core, and two workers pinned to cores 0 and 1 both run on both: measured here (2-core VM, 5 s
// 720p x265 veryfast), one pinned encode 8.4 s (it used both cores), two "pinned" encodes at once 14.8 s
// each; with the encoder kept inside its core, 12.0 s alone and 12.1 s with the other core busy.
import { availableParallelism, cpus } from 'node:os';

/**
 * How many CPUs this process may use when that is fewer than the machine has; undefined when it may
 * use them all. Read at each call: an operator can re-pin a running worker (`taskset -a -p`).
 * `availableParallelism()` counts the process's affinity mask (sched_getaffinity: taskset and cpusets).
 */
export function confinedCpuCount(): number | undefined {
  const allowed = availableParallelism();
  return allowed < cpus().length ? allowed : undefined;
}
