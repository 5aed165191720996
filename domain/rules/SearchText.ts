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
    .replace(/https?:\/\/\S+/g, "") // a URL runs to whitespace or the end: nothing needs to stand in for it
    .replace(/[`*_#>|~=]/g, " ") // runs of the spaces this leaves become one space below
    .replace(/\s+/g, " ")
    .trim()
    .slice(0, README_TEXT_LIMIT)

/** Code-host topics are lowercase words joined by hyphens; searched as text they count as the description. */
export const topicsSearchText = (topics: ReadonlyArray<string>): string => topics.join(" ")
