// Preloaded into the served process by the read-side benchmarks (scripts/bench/served.ts): the
// event loop's delay as perf_hooks.monitorEventLoopDelay measures it inside the server, read and
// reset by the benchmark over a tiny HTTP listener of its own (its port written to
// LOOP_DELAY_PORT_FILE). Plain JavaScript: it loads before tsx and changes nothing of the server.
import { writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { monitorEventLoopDelay } from "node:perf_hooks";

const file = process.env.LOOP_DELAY_PORT_FILE;
if (file) {
  // resolution 10 ms: prom-client's default for nodejs_eventloop_lag; a stall of 15 ms shows as 15 ms
  const histogram = monitorEventLoopDelay({ resolution: 10 });
  histogram.enable();
  const ms = (ns) => Math.round(ns / 1e4) / 100;
  const listener = createServer((req, res) => {
    if (req.url === "/reset") histogram.reset();
    res.setHeader("content-type", "application/json");
    res.end(JSON.stringify({ p50: ms(histogram.percentile(50)), p99: ms(histogram.percentile(99)), max: ms(histogram.max), mean: ms(histogram.mean), samples: histogram.count }));
  });
  listener.listen(0, "127.0.0.1", () => writeFileSync(file, String(listener.address().port)));
  listener.unref();
}
