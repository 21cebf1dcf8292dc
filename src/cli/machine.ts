// `cardflow machine export` (and `machine version`): the payment machine's definition as canonical
// JSON (machines/definition.ts), the file docs/machine.json holds and reviews diff.
import type { Command } from "commander";
import { machineDefinition, machineHash, machineJson } from "../../machines/definition.js";
import { action, processIo, type CliIo } from "./io.js";

export function registerMachine(program: Command, io: CliIo = processIo): void {
  const machine = program
    .command("machine")
    .summary("`machine export`: the machine's definition as canonical JSON; `machine version`: its hash")
    .description("the payment machine's definition, read from the machine itself");

  machine
    .command("export")
    .summary("print the machine's definition as canonical JSON (states, events, guards, actions, transitions, final states)")
    .description("print the payment machine's definition as canonical JSON: states, events with their schema versions, guards, actions, transitions (in the order the machine tries them) and final states; docs/machine.json holds it")
    .action(action(io, async () => void io.out(machineJson(machineDefinition()))));

  machine
    .command("version")
    .summary("print the machine version (the short hash of its canonical definition)")
    .description("print the machine version: the first 12 hex digits of the SHA-256 of the machine's canonical definition (the name of its file in docs/machines/)")
    .action(action(io, async () => void io.out(machineHash() + "\n")));
}
