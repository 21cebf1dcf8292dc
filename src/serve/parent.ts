// Under npx (npm exec), a stop signal reaches npm, not the server: npm exits, and the shell it
// ran the command in with it, while the server, orphaned, would keep serving with nobody left to
// stop it. Started by npm exec, the process watches its parent and, once that is gone, stops
// gracefully as a SIGTERM would have it (./shutdown.ts). A process started otherwise (a
// supervisor, nohup, a container's first process) is left to outlive whoever started it.
export function stopWithParent(env: NodeJS.ProcessEnv = process.env, everyMs = 500): void {
  if (env.npm_command !== "exec") return;
  const parent = process.ppid;
  const watch = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(watch);
    process.kill(process.pid, "SIGTERM");
  }, everyMs);
  watch.unref();
}
