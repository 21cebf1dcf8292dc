// What a caller sent as an id may be anything, a card number or a secret pasted in the wrong
// place too: what the log and the traces write of it never holds a run of 12 digits or more
// (spaces or dashes between them allowed, as card numbers are written), nor what follows an API
// key's `sk_` or a client secret's `_secret_`.
import { pino, stdSerializers, type DestinationStream, type Logger } from "pino";
const CARD_LIKE = /\d(?:[ -]?\d){11,}/g;
const SECRET_LIKE = /(\bsk_|_secret_)[A-Za-z0-9_]+/g;

export const withoutSecrets = (text: string): string => text.replace(CARD_LIKE, "[digits removed]").replace(SECRET_LIKE, "$1[removed]");

/**
 * The log's error serializer: an error's message, stack and causes may quote what a caller or a
 * processor adapter wrote (a card number in an adapter's message): written without card numbers or secrets.
 */
const errWithoutSecrets = (error: Error): unknown => JSON.parse(withoutSecrets(JSON.stringify(stdSerializers.err(error))));

/** The service's logger (JSON lines on stdout, or `destination`), its errors written without card numbers or secrets. */
export const serviceLogger = (level: string, destination?: DestinationStream): Logger =>
  pino({ level, serializers: { err: errWithoutSecrets } }, destination);
