/**
 * A 402 object (v2 `PAYMENT-REQUIRED`, or the v1 body) with each signed offer shown as its JWS header and claims
 * without `validUntil`: an offer is signed afresh for every answer the app makes (like the Sign-In-With-X
 * challenge), so two answers compare for what they offer, not for the second they were made in (issue 30).
 */
export const withStableOffers = (value: any): any => {
  const extension = value?.extensions?.["offer-receipt"]
  if (extension === undefined) return value
  const offers = extension.info.offers.map((offer: any) => {
    const [header, payload] = String(offer.signature).split(".")
    const { validUntil: _fresh, ...claims } = JSON.parse(Buffer.from(payload ?? "", "base64url").toString("utf8"))
    return { ...offer, signature: { header, claims } }
  })
  return { ...value, extensions: { ...value.extensions, "offer-receipt": { ...extension, info: { ...extension.info, offers } } } }
}
