export interface Session {
  csrf: string;
  version: string;
  vault: { root: string; name: string };
  noteCount: number;
  pendingProposals: number;
  pendingDirectives: number;
  index: { state: string; done: number; total: number; indexedAt: string | null };
  hybrid: boolean;
}

export type LiveEvent =
  | { kind: "hello" | "state"; data: { pendingProposals: number; lastEditId: number } }
  | { kind: "index"; data: { changed: string[]; deleted: string[]; attachments: number; more: boolean } };

export interface PageContext {
  main: HTMLElement;
  url: URL;
  session: Session;
  navigate(href: string, opts?: { replace?: boolean }): void;
  /** True once the person has moved on to another page (drop late answers). */
  stale(): boolean;
}

export interface Page {
  onEvent?(e: LiveEvent): void;
  dispose?(): void;
}

export interface NoteSummary {
  path: string;
  name: string;
  title: string;
  tags: string[];
  modified: string;
  size: number;
}
