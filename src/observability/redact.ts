// What a caller sent as an id may be anything, a card number too: what the log and the traces
// write of it never holds a run of 12 digits or more (spaces or dashes between them allowed, as
// card numbers are written).
import { pino, stdSerializers, type DestinationStream, type Logger } from "pino";
const CARD_LIKE = /\d(?:[ -]?\d){11,}/g;

export const withoutCardNumbers = (text: string): string => text.replace(CARD_LIKE, "[digits removed]");

/**
 * The log's error serializer: an error's message, stack and causes may quote what a caller or a
 * processor adapter wrote (a card number in an adapter's message): written without card numbers.
 */
const errWithoutCardNumbers = (error: Error): unknown => JSON.parse(withoutCardNumbers(JSON.stringify(stdSerializers.err(error))));

/** The service's logger (JSON lines on stdout, or `destination`), its errors written without card numbers. */
export const serviceLogger = (level: string, destination?: DestinationStream): Logger =>
  pino({ level, serializers: { err: errWithoutCardNumbers } }, destination);
