// graphile-worker for CompareBenchmark: node graphile-worker.mjs <setup|enqueue-single|enqueue-bulk|trickle|work> ...
//   work <concurrency> <local queue size, 1 for none> <noop|sleep>
// Connection: BENCH_DATABASE_URL. Its best configuration here: a local queue of 500 and batched
// completions (completeJobBatchDelay 0), concurrency and processes chosen by the caller.
import { Logger, makeWorkerUtils, run, runMigrations } from 'graphile-worker';
import { enqueueBulk, enqueueSingle, handlerRecorder, trickle, untilStdinCloses } from './protocol.mjs';

const connectionString = process.env.BENCH_DATABASE_URL;
const [mode, ...args] = process.argv.slice(2);
const numbers = args.map(Number);
// Silent: its default logger writes a line per completed job, which would cost the worker CPU and
// the harness a pipe to read, and slow it down for nothing the benchmark uses.
const logger = new Logger(() => () => {});

if (mode === 'setup') {
  await runMigrations({ connectionString, logger });
} else if (mode === 'work') {
  const [concurrency, localQueue, handler] = [numbers[0], numbers[1], args[2]];
  const recorder = handlerRecorder(handler);
  const runner = await run({
    connectionString,
    logger,
    concurrency,
    maxPoolSize: Math.max(10, concurrency + 2),
    pollInterval: 2000,
    noHandleSignals: true,
    taskList: { bench: (payload) => recorder.handle(payload) },
    preset: {
      worker: {
        localQueue: localQueue > 1 ? { size: localQueue } : undefined,
        completeJobBatchDelay: 0,
        failJobBatchDelay: 0,
      },
    },
  });
  untilStdinCloses(() => runner.stop(), recorder);
} else {
  const utils = await makeWorkerUtils({ connectionString, logger, maxPoolSize: 10 });
  const addOne = (payload) => utils.addJob('bench', payload);
  if (mode === 'enqueue-single') {
    await enqueueSingle(numbers[0], numbers[1], addOne);
  } else if (mode === 'enqueue-bulk') {
    await enqueueBulk(numbers[0], numbers[1],
      (payloads) => utils.addJobs(payloads.map((payload) => ({ identifier: 'bench', payload }))));
  } else if (mode === 'trickle') {
    await trickle(numbers[0], numbers[1], addOne);
  } else {
    throw new Error(`unknown mode ${mode}`);
  }
  await utils.release();
}
