// Write operations by tool name: how an approved proposal finds the code to re-plan it.
import { appendLogOp, applyEditsOp, completeDirectiveOp, filePageOp, patchSectionOp, writeNoteOp } from "./ops";
import { deleteNoteOp, moveNoteOp } from "./ops-move";
import type { WriteOp } from "./plan";

export const WRITE_OPS: Record<string, WriteOp> = Object.fromEntries(
  [writeNoteOp, applyEditsOp, patchSectionOp, filePageOp, appendLogOp, moveNoteOp, deleteNoteOp, completeDirectiveOp].map((op) => [op.name, op as WriteOp]),
);
