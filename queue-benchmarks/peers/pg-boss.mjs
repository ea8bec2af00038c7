// pg-boss for CompareBenchmark: node pg-boss.mjs <setup|enqueue-single|enqueue-bulk|trickle|work> ...
//   work <loops> <batch size> <parallel per loop> <polling seconds> <noop|sleep>
// Connection: BENCH_DATABASE_URL. Its best configuration here: several work() loops in one
// process, each fetching a batch and running its jobs `parallel` at a time; it polls (no LISTEN/NOTIFY).
import PgBoss from 'pg-boss';
import { enqueueBulk, enqueueSingle, handlerRecorder, trickle, untilStdinCloses } from './protocol.mjs';

const connectionString = process.env.BENCH_DATABASE_URL;
const [mode, ...args] = process.argv.slice(2);
const numbers = args.map(Number);

const boss = new PgBoss({ connectionString, max: 10, supervise: false, schedule: false });
boss.on('error', (error) => console.error(error));
await boss.start();

if (mode === 'setup') {
  await boss.createQueue('bench');
  await boss.stop({ graceful: false, wait: true });
} else if (mode === 'work') {
  const [loops, batchSize, parallel, pollSeconds, handler] = [numbers[0], numbers[1], numbers[2], numbers[3], args[4]];
  const recorder = handlerRecorder(handler);
  // Each loop runs its batch `parallel` jobs at a time: the concurrency a handler pool would allow.
  const runBatch = async (jobs) => {
    let next = 0;
    await Promise.all(Array.from({ length: Math.min(parallel, jobs.length) }, async () => {
      while (next < jobs.length) {
        await recorder.handle(jobs[next++].data);
      }
    }));
  };
  for (let i = 0; i < loops; i++) {
    await boss.work('bench', { batchSize, pollingIntervalSeconds: pollSeconds }, runBatch);
  }
  untilStdinCloses(() => boss.stop({ graceful: true, wait: true, timeout: 10000 }), recorder);
} else {
  const sendOne = (data) => boss.send('bench', data);
  if (mode === 'enqueue-single') {
    await enqueueSingle(numbers[0], numbers[1], sendOne);
  } else if (mode === 'enqueue-bulk') {
    await enqueueBulk(numbers[0], numbers[1], (payloads) => boss.insert(payloads.map((data) => ({ name: 'bench', data }))));
  } else if (mode === 'trickle') {
    await trickle(numbers[0], numbers[1], sendOne);
  } else {
    throw new Error(`unknown mode ${mode}`);
  }
  await boss.stop({ graceful: false, wait: true });
}
