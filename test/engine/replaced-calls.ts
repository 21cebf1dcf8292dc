// The simulators with some calls of their processors' ports replaced: a processor that does not
// answer a call, a lookup that fails or is watched. `replace` gives each processor's replacements
// (none: the simulator's own calls); a replacement may call the simulator's own through `port`.
import type { Processor } from "../../machines/events.js";
import type { ProcessorPort, Processors } from "../../src/processors/port.js";

export function withReplacedCalls(simulators: Processors, replace: (name: Processor, port: ProcessorPort) => Partial<ProcessorPort>): Processors {
  return {
    connect: (report) => simulators.connect(report),
    get(name) {
      const port = simulators.get(name);
      const replaced = replace(name, port);
      return new Proxy(port, { get: (target, prop, receiver) => (Object.hasOwn(replaced, prop) ? replaced[prop as keyof ProcessorPort] : Reflect.get(target, prop, receiver)) });
    },
  };
}
