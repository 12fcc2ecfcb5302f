// Query expansion through the chat provider: a hypothetical answer passage
// (HyDE: its embedding lands nearer the notes that answer the question than the
// question's does) and a couple of paraphrases (more words for the keyword side).
import { ToolError } from "../errors";
import type { ChatProvider } from "../providers/types";
import { toToolError } from "./tool-error";

export interface Expansion {
  hypothetical: string | null;
  paraphrases: string[];
}

const SYSTEM = [
  "You help a search engine over someone's personal Markdown notes.",
  "Given a search query, reply with one JSON object and nothing else:",
  '{"hypothetical": "a short passage (2-4 sentences) that answers the query, written as it might appear in a note",',
  ' "paraphrases": ["the query reworded", "the query reworded with other key terms"]}',
].join("\n");

/** Pull the first JSON object out of a model's reply (models like to wrap JSON in code fences). */
export function parseJsonObject(text: string): Record<string, unknown> | null {
  const start = text.indexOf("{");
  const end = text.lastIndexOf("}");
  if (start === -1 || end <= start) return null;
  try {
    const v = JSON.parse(text.slice(start, end + 1));
    return v && typeof v === "object" && !Array.isArray(v) ? v : null;
  } catch {
    return null;
  }
}

export async function expandQuery(chat: ChatProvider, query: string, signal?: AbortSignal): Promise<Expansion> {
  let reply: string;
  try {
    reply = await chat.chat(
      [
        { role: "system", content: SYSTEM },
        { role: "user", content: query },
      ],
      { json: true, temperature: 0, maxTokens: 400, signal },
    );
  } catch (e) {
    throw toToolError(e);
  }
  const j = parseJsonObject(reply);
  if (!j) throw new ToolError("provider-error", `The LLM (${chat.model}) did not answer the query expansion with JSON`);
  const hypothetical = typeof j.hypothetical === "string" && j.hypothetical.trim() ? j.hypothetical.trim().slice(0, 2000) : null;
  const paraphrases = Array.isArray(j.paraphrases)
    ? j.paraphrases.filter((p): p is string => typeof p === "string" && p.trim().length > 0).map((p) => p.trim().slice(0, 500)).slice(0, 3)
    : [];
  return { hypothetical, paraphrases };
}
