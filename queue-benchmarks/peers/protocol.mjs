// The worker protocol every contender's process speaks to CompareBenchmark, on stdout:
//   READY                        the workers are started
//   FIRST <epoch ms>             the first handler started
//   MARK cpuMs=..                its CPU time since then, whenever stdin sends the line MARK;
//                                STATS' p50/p99 count only the jobs started after the last MARK
//   COUNT handled=..             handlers started so far, whenever stdin sends the line COUNT
//   STATS handled=.. p50=.. p99=.. heapMb=.. rssMb=..   when stdin closes; then the process exits
// Payloads are {n, t}: t is the enqueue time in epoch milliseconds, so a handler knows its pick-up delay.
import { readFileSync } from 'node:fs';

export const nowMillis = () => performance.timeOrigin + performance.now();
export const sleep = (millis) => new Promise((resolve) => setTimeout(resolve, millis));

export function handlerRecorder(mode) {
  const delays = [];
  let first = true;
  let cpuAtFirst = 0;
  let delaysFrom = 0; // jobs before the last MARK were a warm-up: their delays are not reported
  const handle = async (payload) => {
    const started = nowMillis();
    if (first) {
      first = false;
      const cpu = process.cpuUsage();
      cpuAtFirst = cpu.user + cpu.system;
      console.log(`FIRST ${started}`);
    }
    delays.push(started - payload.t);
    if (mode === 'sleep') {
      await sleep(5);
    }
  };
  const cpuSinceFirst = () => {
    if (!delays.length) {
      return 0;
    }
    const cpu = process.cpuUsage();
    return (cpu.user + cpu.system - cpuAtFirst) / 1000;
  };
  const mark = () => {
    delaysFrom = delays.length;
    console.log(`MARK cpuMs=${cpuSinceFirst().toFixed(0)}`);
  };
  const report = () => {
    const sorted = Float64Array.from(delays.slice(delaysFrom)).sort();
    const at = (q) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))] : 0);
    const rss = /VmHWM:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'));
    const heapMb = process.memoryUsage().heapUsed / 1048576;
    console.log(`STATS handled=${delays.length} p50=${at(0.5).toFixed(2)} p99=${at(0.99).toFixed(2)} `
      + `heapMb=${heapMb.toFixed(1)} rssMb=${(Number(rss[1]) / 1024).toFixed(1)}`);
  };
  const count = () => console.log(`COUNT handled=${delays.length}`);
  return { handle, mark, count, report };
}

/** Runs until stdin closes, answering MARK and COUNT lines; then reports and stops. */
export function untilStdinCloses(stop, recorder) {
  console.log('READY');
  process.stdin.setEncoding('utf8');
  process.stdin.on('data', (chunk) => {
    for (const line of chunk.split('\n')) {
      if (line.trim() === 'MARK') {
        recorder.mark();
      } else if (line.trim() === 'COUNT') {
        recorder.count();
      }
    }
  });
  process.stdin.on('end', async () => {
    recorder.report();
    await stop();
    process.exit(0);
  });
}

/** `count` single inserts from `producers` concurrent loops; prints RATE rows/s. */
export async function enqueueSingle(count, producers, insertOne) {
  let next = 0;
  const started = performance.now();
  await Promise.all(Array.from({ length: producers }, async () => {
    while (next < count) {
      const n = next++;
      await insertOne({ n, t: nowMillis() });
    }
  }));
  console.log(`RATE ${(count / ((performance.now() - started) / 1000)).toFixed(0)}`);
}

/** `count` rows in chunks of `chunk`, one call each, one after another; prints RATE rows/s. */
export async function enqueueBulk(count, chunk, insertMany) {
  const started = performance.now();
  for (let first = 0; first < count; first += chunk) {
    const t = nowMillis();
    const payloads = [];
    for (let n = first; n < Math.min(count, first + chunk); n++) {
      payloads.push({ n, t });
    }
    await insertMany(payloads);
  }
  console.log(`RATE ${(count / ((performance.now() - started) / 1000)).toFixed(0)}`);
}

/** `count` single inserts, one every `intervalMillis`, for pick-up latency; prints DONE. */
export async function trickle(count, intervalMillis, insertOne) {
  for (let n = 0; n < count; n++) {
    const due = performance.now() + intervalMillis;
    await insertOne({ n, t: nowMillis() });
    const wait = due - performance.now();
    if (wait > 0) {
      await sleep(wait);
    }
  }
  console.log('DONE');
}
