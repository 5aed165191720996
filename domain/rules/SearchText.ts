/**
 * The text the catalog searches, derived the same way for every adapter: a repo name split into its words
 * (`fast-json_parser`, `FastJsonParser` → "fast json parser") beside the name itself, and a README reduced
 * to plain words (markup, links' targets, images and HTML tags dropped) and cut short, because the opening
 * of a README says what the repo is and a bounded text keeps the index small.
 */
export const README_TEXT_LIMIT = 8_000

/** A repo name followed by its words split apart, so `FastJsonParser` is found by "json". */
export const nameSearchText = (name: string): string => {
  const words = name.replace(/([a-z0-9])([A-Z])/g, "$1 $2").replace(/[-_.]+/g, " ")
  return words === name ? name : `${name} ${words}`
}

/** A README's Markdown reduced to plain searchable text, cut to `README_TEXT_LIMIT` characters. */
export const readmeSearchText = (markdown: string): string =>
  markdown
    .replace(/<!--[\s\S]*?-->/g, " ")
    .replace(/<[^>]*>/g, " ")
    .replace(/!\[[^\]]*\]\([^)]*\)/g, " ") // images: their alt text is rarely about the repo
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1") // links: keep the words, drop the target
    // Stryker disable next-line StringLiteral: the URL runs to whitespace or the end, so the space it leaves always joins other whitespace or is trimmed
    .replace(/https?:\/\/\S+/g, " ")
    // Stryker disable next-line Regex: one space per markup character or per run is the same once runs of whitespace become one space
    .replace(/[`*_#>|~=]+/g, " ")
    .replace(/\s+/g, " ")
    .trim()
    .slice(0, README_TEXT_LIMIT)

/** Code-host topics are lowercase words joined by hyphens; searched as text they count as the description. */
export const topicsSearchText = (topics: ReadonlyArray<string>): string => topics.join(" ")
