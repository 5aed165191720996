import { Either } from "effect"

/** The longest storefront tagline, in Unicode code points. */
export const TAGLINE_MAX_CODE_POINTS = 140

/**
 * A storefront tagline is one line of plain text of at most 140 Unicode code points, with no line breaks
 * or control characters. It is stored as given and escaped wherever it is shown.
 */
export const validateTagline = (input: string): Either.Either<string, string> => {
  // Code points, not UTF-16 units: an emoji counts once.
  if ([...input].length > TAGLINE_MAX_CODE_POINTS) {
    return Either.left(`must be at most ${TAGLINE_MAX_CODE_POINTS} characters`)
  }
  // C0, DEL, C1 controls and the Unicode line/paragraph separators all break "one line of plain text".
  if (/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/u.test(input)) {
    return Either.left("must be one line of plain text without line breaks or control characters")
  }
  // A lone surrogate is not text: it could not be stored "as given" (databases replace it).
  if (/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(input)) {
    return Either.left("must be valid Unicode text")
  }
  return Either.right(input)
}
