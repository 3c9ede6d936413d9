// A source that decodes fewer seconds than its container declares (docs/api-decisions.md §4): one rule
// for the worker (fail or go on) and the job view (warn), so both read the same numbers the same way.

/** Shorter than declared by more than this: the source is truncated or corrupt — invalid_media, charged 0. */
export const TRUNCATED_AFTER_SECONDS = 1;
/** Shorter by more than this (and not truncated): the item succeeds, charged for what was made, with a warning. */
export const WARN_AFTER_SECONDS = 0.1;

export interface ItemWarning {
  code: 'source_shorter_than_declared';
  message: string;
}

const fixed = (seconds: number): string => seconds.toFixed(1);

/** The invalid_media message for a source that ends too early, or null when it decoded (nearly) in full. */
export function truncatedSource(declaredSeconds: number, decodedSeconds: number): string | null {
  if (declaredSeconds - decodedSeconds <= TRUNCATED_AFTER_SECONDS) return null;
  return `The source decodes to ${fixed(decodedSeconds)} s of the ${fixed(declaredSeconds)} s its container declares: it is truncated or corrupt. It was not delivered and you were not charged; upload the complete file.`;
}

/** The view's warnings for an item that ended with `decodedSeconds` of a source declaring `declaredSeconds`. */
export function decodedLengthWarnings(declaredSeconds: number, decodedSeconds: number | null): ItemWarning[] {
  if (decodedSeconds === null || declaredSeconds - decodedSeconds <= WARN_AFTER_SECONDS) return [];
  return [
    {
      code: 'source_shorter_than_declared',
      message: `The source decoded to ${fixed(decodedSeconds)} s of the ${fixed(declaredSeconds)} s its container declares (its end is missing or unreadable); the output lasts what was decoded, and only that was charged.`,
    },
  ];
}
