// check_faithfulness: a second model call splits the answer into claims and
// judges each against the retrieved passages only. It catches what citation
// validation cannot: a confident sentence that none of the cited pages says.
import { randomBytes } from "node:crypto";
import type { ChatProvider } from "../providers/types";
import { chatJson } from "./chat-json";
import { contextBlock } from "./context";
import { FAITHFULNESS_SYSTEM } from "./prompts";
import type { ContextPage } from "./validate";

export interface Faithfulness {
  /** Supported claims / claims, 0–1 (1 when the answer makes no claim). */
  score: number;
  unsupported: string[];
}

const MAX_CLAIMS = 50;
const MAX_CLAIM_CHARS = 500;

function supportedValue(v: unknown): boolean | null {
  if (typeof v === "boolean") return v;
  if (typeof v === "string") {
    const s = v.trim().toLowerCase();
    if (["true", "yes", "supported"].includes(s)) return true;
    if (["false", "no", "unsupported", "not supported"].includes(s)) return false;
  }
  return null;
}

export async function checkFaithfulness(chat: ChatProvider, answer: string, pages: ContextPage[], signal?: AbortSignal): Promise<Faithfulness> {
  const block = contextBlock(pages);
  const nonce = randomBytes(6).toString("hex");
  const open = `<<<ANSWER ${nonce}>>>`;
  const close = `<<<END ANSWER ${nonce}>>>`;
  const claims = await chatJson(chat, {
    what: "the faithfulness check",
    messages: [
      { role: "system", content: FAITHFULNESS_SYSTEM(block, open, close) },
      { role: "user", content: `${block.text}\n\n${open}\n${answer.replaceAll(nonce, "")}\n${close}` },
    ],
    maxTokens: 1_200,
    signal,
    read: (o) => {
      if (!Array.isArray(o.claims)) return null;
      const out: { claim: string; supported: boolean }[] = [];
      for (const c of o.claims.slice(0, MAX_CLAIMS)) {
        const claim = typeof c?.claim === "string" ? c.claim.trim() : "";
        const supported = supportedValue(c?.supported);
        if (claim && supported !== null) out.push({ claim: claim.slice(0, MAX_CLAIM_CHARS), supported });
      }
      // Claims were listed but none could be read: that is not an answer to score.
      return o.claims.length > 0 && out.length === 0 ? null : out;
    },
  });
  if (!claims.length) return { score: 1, unsupported: [] };
  const ok = claims.filter((c) => c.supported).length;
  return { score: Math.round((ok / claims.length) * 1000) / 1000, unsupported: claims.filter((c) => !c.supported).map((c) => c.claim) };
}
