// A root-hook plugin that records, for each test file, its wall time and the CPU time it cost: its own
// process's and that of every child process it waited for (the CLI, its plugins and the programs they
// ran). Loaded by every test command (.mocharc.json); it writes only when PL_TEST_TIMINGS names a file,
// one JSON line per run of the root suite, appended (parallel workers share the file; in parallel mode
// each file is a run of its own). `node test/tools/mocha/timings.js <file>` prints the table, the
// costliest first.

const { appendFileSync, readFileSync } = require("node:fs");
const { relative } = require("node:path");

const TICKS_PER_SECOND = 100; // USER_HZ, 100 on every Linux that Node.js supports

/** CPU seconds of this process and of the children it has waited for (Linux /proc; 0 elsewhere). */
function cpuSeconds() {
    try {
        const fields = readFileSync("/proc/self/stat", "utf8").split(") ")[1].split(" ");
        // utime, stime, cutime, cstime: fields 14-17 of proc(5), 12-15 after the command name.
        return fields.slice(11, 15).reduce((sum, ticks) => sum + Number(ticks), 0) / TICKS_PER_SECOND;
    } catch {
        return 0;
    }
}

let started;

exports.mochaHooks = process.env.PL_TEST_TIMINGS
    ? {
          beforeAll() {
              started = { at: Date.now(), wall: process.hrtime.bigint(), cpu: cpuSeconds() };
          },
          afterAll() {
              const files = new Set((this.test?.parent?.suites ?? []).map((suite) => suite.file).filter(Boolean));
              if (files.size === 0 || !started) return;
              const line = {
                  file: files.size === 1 ? relative(process.cwd(), [...files][0]) : `${files.size} files`,
                  wall: Number(process.hrtime.bigint() - started.wall) / 1e9,
                  cpu: cpuSeconds() - started.cpu,
                  /** When it started (ms since the epoch), to lay the suites of a parallel run on a timeline. */
                  start: started.at,
                  pid: process.pid,
              };
              appendFileSync(process.env.PL_TEST_TIMINGS, `${JSON.stringify(line)}\n`);
          },
      }
    : {};

/** Prints the recorded suites, the most CPU first, with the totals. */
function printTimings(path) {
    const runs = readFileSync(path, "utf8")
        .split("\n")
        .filter((line) => line.trim())
        .map((line) => JSON.parse(line))
        .sort((a, b) => b.cpu - a.cpu);
    const total = runs.reduce((sum, run) => ({ wall: sum.wall + run.wall, cpu: sum.cpu + run.cpu }), {
        wall: 0,
        cpu: 0,
    });
    console.log("   wall s    cpu s  suite");
    for (const run of runs)
        console.log(`${run.wall.toFixed(1).padStart(9)} ${run.cpu.toFixed(1).padStart(8)}  ${run.file}`);
    console.log(`${total.wall.toFixed(1).padStart(9)} ${total.cpu.toFixed(1).padStart(8)}  all ${runs.length} suites`);
}

if (require.main === module) printTimings(process.argv[2]);
