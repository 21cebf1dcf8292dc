// Preloaded into the server processes tests spawn (`node --import`): the server exits when the
// test process that spawned it is gone (a test that timed out, a killed vitest worker), so no
// orphaned server keeps a port, a store and the machine's cores.
const parent = process.ppid;
setInterval(() => {
  if (process.ppid !== parent) process.exit(1);
}, 500).unref();
