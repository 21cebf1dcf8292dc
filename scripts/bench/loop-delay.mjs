// Preloaded into the served process by the read-side benchmarks (scripts/bench/served.ts): the
// event loop's delay as perf_hooks.monitorEventLoopDelay measures it inside the server, read and
// reset by the benchmark over a tiny HTTP listener of its own (its port written to
// LOOP_DELAY_PORT_FILE). Plain JavaScript: it loads before tsx and changes nothing of the server.
import { writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { monitorEventLoopDelay } from "node:perf_hooks";

const file = process.env.LOOP_DELAY_PORT_FILE;
if (file) {
  // resolution 10 ms: prom-client's default for nodejs_eventloop_lag. The histogram records the time
  // between two runs of its 10 ms timer, the timer's own interval included (an idle loop reads
  // p50 10.26 ms; one 30 ms stall reads 40 ms): the delay is what exceeds the interval.
  const RESOLUTION_MS = 10;
  const histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  histogram.enable();
  const ms = (ns) => Math.max(0, Math.round(ns / 1e4 - RESOLUTION_MS * 100) / 100);
  const listener = createServer((req, res) => {
    if (req.url === "/reset") histogram.reset();
    res.setHeader("content-type", "application/json");
    res.end(JSON.stringify({ p50: ms(histogram.percentile(50)), p99: ms(histogram.percentile(99)), max: ms(histogram.max), mean: ms(histogram.mean), samples: histogram.count }));
  });
  listener.listen(0, "127.0.0.1", () => writeFileSync(file, String(listener.address().port)));
  listener.unref();
}
