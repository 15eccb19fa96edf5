// Answers as a dialect sees them, built from a status, headers and a body.

import type { HttpAnswer, Target } from "../../../../provider/tasks/protocol/dialects/dialect";

export const NOW = Date.parse("2026-11-24T12:00:00Z");

export function answer(status: number, body?: unknown, headers: Record<string, string> = {}): HttpAnswer {
    const lower = Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
    return { status, body, header: (name) => lower[name.toLowerCase()] };
}

export const TARGET: Target = {
    collectionPath: "/widgets",
    itemPath: (id) => `/widgets/${encodeURIComponent(id)}`,
    createId: "w1",
    typeName: "Test::Widgets::Widget",
};
