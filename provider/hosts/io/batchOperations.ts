// The operations a batch of the hosts store carries (hostsFileStore.ts): each is run on the batch's
// document, and answered only once the batch's write has landed and its lock is released; a failing
// operation fails alone.

import { remembered } from "../../shared/remembered";
import type { HostsDocument } from "../logic/hostsDocument";

/**
 * What an edit may need to know of its batch's earlier attempts. An attempt whose write was undone after
 * it was in place for a moment (a tool had written into the file our rename replaced, and its content was
 * put back) may have been copied by a tool that rewrote the file meanwhile, so the retry can meet its own
 * lines again.
 */
export interface EditAttempt {
    /** Whether an earlier attempt of this batch was in the file for a moment, then undone. */
    readonly followsShownAttempt: boolean;
    /** The lines such attempts appended (UTF-8 text): found again with exactly this text, a line is the edit's own. */
    readonly shownLines: ReadonlySet<string>;
}

/**
 * Applies its edits to the document and returns how to compute its answer from the edited document: it may
 * be computed while the write is under way (see `HostsFileAccess.write`), and is given once it has landed.
 */
export type EditThenAnswer<T> = (doc: HostsDocument, attempt: EditAttempt) => () => T;

export const FIRST_ATTEMPT: EditAttempt = { followsShownAttempt: false, shownLines: new Set() };

/** An operation waiting in a file's queue, and how to answer its caller. */
export interface Pending {
    readonly kind: "read" | "edit";
    readonly run: EditThenAnswer<unknown>;
    readonly resolve: (value: unknown) => void;
    readonly reject: (error: unknown) => void;
}

/** An operation run on the document: how to compute its answer, or why it failed. */
export interface Outcome {
    readonly op: Pending;
    readonly finish?: () => unknown;
    readonly error?: unknown;
}

/** Runs an operation on the document now; its answer is given later, by `answerAll`. */
export function applyToDocument(op: Pending, doc: HostsDocument, attempt: EditAttempt): Outcome {
    try {
        return { op, finish: remembered(op.run(doc, attempt)) };
    } catch (error) {
        return { op, error };
    }
}

/** Computes the outcomes' answers ahead of the moment they are given; a failure is remembered and given then. */
export function computeAhead(outcomes: readonly Outcome[]): void {
    for (const { finish } of outcomes) {
        try {
            finish?.();
        } catch {
            // Remembered, and given to its caller with the other answers.
        }
    }
}

/** Gives every caller of the batch its answer, or its own failure. */
export function answerAll(outcomes: readonly Outcome[]): void {
    for (const { op, finish, error } of outcomes) {
        if (finish) settle(op, finish);
        else op.reject(error);
    }
}

/** Gives `op`'s caller the answer `answer` computes, or the error it throws. */
export function settle(op: Pending, answer: () => unknown): void {
    try {
        op.resolve(answer());
    } catch (error) {
        op.reject(error);
    }
}
