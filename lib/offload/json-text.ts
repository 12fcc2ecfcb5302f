/**
 * A tool result already serialised (by a read worker): the dispatcher puts
 * `text` in the result's text part as it is, so that the main thread neither
 * copies the result object across threads nor serialises it again.
 */
export class JsonText {
  constructor(readonly text: string) {}
}
