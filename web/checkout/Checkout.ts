/*
 * The checkout page's script: lists the wallets the browser has, pays with the one the person picks, saves
 * the archive and shows the receipt link. Progressive: the page explains itself and how to pay with an x402
 * client without this script.
 */
import type { Wallet } from "@wallet-standard/base"
import { chainIdOf, chainName, connect, discoverEthereumWallets, type EthereumWallet, ensureChain, errorCode, signPayment, WrongNetwork } from "./Ethereum.js"
import { buildTransfer, connectSolana, discoverSolanaWallets, signTransfer, walletChainOf } from "./Solana.js"
import { button, el, link, statusBox } from "./Status.js"
import { bytesToBase64, fetchOffer, fetchSolanaBlockhash, newPaymentId, pay, type PaymentRequired, paymentHeader, Refusal, type Requirement } from "./X402.js"

const RECEIPT_DAYS = 7

/** The server could not give a recent Solana blockhash (its RPC endpoint is off or down, or the limit was hit). */
class BlockhashUnavailable extends Error {
  constructor(readonly reason: Refusal["reason"]) {
    super(reason.detail)
  }
}

const root = document.getElementById("pay")
const list = document.getElementById("wallet-list")
const box = document.getElementById("status")

if (root !== null && list !== null && box !== null) {
  const checkoutUrl = root.dataset["checkout"] ?? location.href
  const chains = (root.dataset["chains"] ?? "").split(" ")
  const price = root.dataset["price"] ?? ""
  const status = statusBox(box)
  let busy = false

  const setBusy = (on: boolean) => {
    busy = on
    list.querySelectorAll("button").forEach((b) => (b.disabled = on))
  }

  /** Saves the bytes as a file through a temporary object URL (no navigation, nothing from another origin). */
  const save = (blob: Blob, filename: string) => {
    const url = URL.createObjectURL(blob)
    const a = link(url, filename)
    a.download = filename
    a.hidden = true
    document.body.append(a)
    a.click()
    a.remove()
    setTimeout(() => URL.revokeObjectURL(url), 60_000)
  }

  const until = () => new Date(Date.now() + RECEIPT_DAYS * 86_400_000).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" })

  const receiptParts = (receipt: string | null) =>
    receipt === null ? [] : [" Your receipt link downloads it again without paying until about ", until(), ": ", link(receipt, "download again", true), "."]

  const refusalMessage = (r: Refusal["reason"], where: string): string => {
    if (/insufficient/i.test(r.code)) return `Your wallet does not hold enough USDC on ${where} for this purchase. Nothing was charged.`
    const detail = r.detail === "" ? `the server answered ${r.status} (${r.code})` : r.detail
    return `The payment was refused: ${detail}${r.status === 402 ? " Nothing was charged." : ""}`
  }

  /** Sends the payment, and the same payment again on a retry: its payment-identifier makes that safe. */
  const send = async (header: string, where: string): Promise<void> => {
    status.show("working", ["Paying… keep this page open."])
    let paid
    try {
      paid = await pay(checkoutUrl, header)
    } catch (e) {
      if (e instanceof Refusal && e.reason.status === 503 && e.reason.code === "settlement_pending") {
        const wait = e.reason.retryAfter ?? 10
        status.show("pending", [`The payment is being settled on ${where}; its outcome is not known yet, and it will not be charged twice. Try again in ${wait} seconds.`],
          [button("Try again", () => void send(header, where))], true)
      } else if (e instanceof Refusal) {
        status.show("refused", [refusalMessage(e.reason, where)], [], true)
      } else {
        status.show("no-answer", ["The server did not answer, so the payment may have gone through. Trying again sends the same payment: you will not be charged twice."],
          [button("Try again", () => void send(header, where))], true)
      }
      return
    }
    status.show("working", [`Paid. Saving ${paid.filename}…`])
    try {
      save(await paid.archive, paid.filename)
      status.show("paid", [`Paid and downloaded ${paid.filename}.`, ...receiptParts(paid.receipt)], [], true)
    } catch {
      status.show("download-failed", ["Paid, but the download broke off.", ...(paid.receipt === null ? [" Pay again with the same wallet only after asking the seller."] : receiptParts(paid.receipt))], [], true)
    }
  }

  const offerFor = async (prefix: string): Promise<{ offer: PaymentRequired; requirement: Requirement }> => {
    const offer = await fetchOffer(checkoutUrl)
    const requirement = offer.accepts.find((r) => r.scheme === "exact" && r.network.startsWith(prefix))
    if (requirement === undefined) throw new Refusal({ status: 402, code: "not_offered", detail: "This checkout no longer takes payments on this chain. Reload the page.", retryAfter: null })
    return { offer, requirement }
  }

  /** What went wrong before the payment was sent: nothing was charged in any of these. */
  const failed = (e: unknown, wallet: string) => {
    if (errorCode(e) === 4001) status.show("declined", [`You declined in ${wallet}. Nothing was paid.`], [], true)
    else if (e instanceof WrongNetwork) {
      status.show("wrong-network", [`${wallet} is on ${e.current === null ? "another network" : chainName(e.current)}, not ${chainName(e.wanted)}. Switch the network in ${wallet} and pay again.`], [], true)
    } else if (e instanceof Refusal) status.show("refused", [refusalMessage(e.reason, wallet)], [], true)
    else if (e instanceof BlockhashUnavailable) {
      const wait = e.reason.retryAfter === null ? "" : ` Try again in ${e.reason.retryAfter} seconds.`
      status.show("error", [`The payment could not be prepared: ${e.reason.detail === "" ? `the server answered ${e.reason.status}` : e.reason.detail}${wait} Nothing was charged.`], [], true)
    } else if (/reject|denied|declin|cancel/i.test(String((e as Error)?.message ?? e))) status.show("declined", [`You declined in ${wallet}. Nothing was paid.`], [], true)
    else status.show("error", [`${wallet} could not complete the payment: ${String((e as Error)?.message ?? e)}. Nothing was charged.`], [], true)
  }

  const payWithEthereum = async (wallet: EthereumWallet) => {
    setBusy(true)
    try {
      status.show("working", [`Connecting to ${wallet.name}…`])
      const from = await connect(wallet.provider)
      const { offer, requirement } = await offerFor("eip155:")
      const chainId = chainIdOf(requirement)
      status.show("working", [`Asking ${wallet.name} to use ${chainName(chainId)}…`])
      try {
        await ensureChain(wallet.provider, chainId)
      } catch (e) {
        if (errorCode(e) === 4001 || e instanceof WrongNetwork) throw e
        // The wallet could not switch by itself: the person has to.
        throw new WrongNetwork(chainId, Number.parseInt(String(await wallet.provider.request({ method: "eth_chainId" }).catch(() => "")), 16) || null)
      }
      status.show("working", [`Sign the payment in ${wallet.name}: ${price} USDC on ${chainName(chainId)}. Signing moves nothing until the checkout settles it.`])
      const payload = await signPayment(wallet.provider, from, requirement)
      await send(paymentHeader(offer, requirement, payload, newPaymentId()), chainName(chainId))
    } catch (e) {
      failed(e, wallet.name)
    } finally {
      setBusy(false)
    }
  }

  const payWithSolana = async (wallet: Wallet) => {
    setBusy(true)
    try {
      const { offer, requirement } = await offerFor("solana:")
      const chain = walletChainOf(requirement)
      if (chain === null) throw new Error(`unknown Solana network ${requirement.network}`)
      if (!wallet.chains.includes(chain)) throw new WrongNetwork(0, null)
      status.show("working", [`Connecting to ${wallet.name}…`])
      const account = await connectSolana(wallet, chain)
      // A live requirement names no recent blockhash: the server asks its own Solana RPC endpoint for one.
      const recent = requirement.extra["recentBlockhash"] === undefined
        ? await fetchSolanaBlockhash().catch((e: unknown) => {
          throw e instanceof Refusal ? new BlockhashUnavailable(e.reason) : e
        })
        : undefined
      const unsigned = await buildTransfer(account.address, requirement, recent)
      status.show("working", [`Approve the transaction in ${wallet.name}: ${price} USDC on Solana${chain === "solana:devnet" ? " devnet" : ""}. The checkout pays the network fee.`])
      const signed = await signTransfer(wallet, account, chain, unsigned)
      await send(paymentHeader(offer, requirement, { transaction: bytesToBase64(signed) }, newPaymentId()), "Solana")
    } catch (e) {
      if (e instanceof WrongNetwork) status.show("wrong-network", [`${wallet.name} does not offer this checkout's Solana network. Switch networks in ${wallet.name} or pick another wallet.`], [], true)
      else failed(e, wallet.name)
    } finally {
      setBusy(false)
    }
  }

  const offerWallet = (name: string, icon: string | null, kind: string, onPay: () => void) => {
    document.getElementById("wallet-none")?.remove()
    const label = `Pay ${price} USDC with ${name} (${kind})`
    const b = button(label, () => {
      if (!busy) onPay()
    })
    b.disabled = busy
    if (icon !== null) b.prepend(el("img", { src: icon, alt: "", width: 20, height: 20, className: "wallet-icon" }))
    list.append(el("li", {}, b))
  }

  document.getElementById("wallets")!.hidden = false
  if (chains.includes("base")) discoverEthereumWallets((w) => offerWallet(w.name, w.icon, "Base", () => void payWithEthereum(w)))
  if (chains.includes("solana")) discoverSolanaWallets((w) => offerWallet(w.name, w.icon.startsWith("data:image/") ? w.icon : null, "Solana", () => void payWithSolana(w)))
  // Wallets announce themselves as they load; after a second without one, say what to install.
  setTimeout(() => {
    if (list.querySelector("button") !== null) return
    document.getElementById("wallet-none")?.replaceChildren("No wallet found.")
    const install = [
      ...(chains.includes("base") ? ["an Ethereum wallet such as MetaMask, Coinbase Wallet or Rabby (for Base)"] : []),
      ...(chains.includes("solana") ? ["a Solana wallet such as Phantom, Solflare or Backpack"] : [])
    ].join(", or ")
    status.show("no-wallet", [`No browser wallet found. Install ${install}, then reload this page. Or pay with an x402 client (below).`])
  }, 1200)
}
