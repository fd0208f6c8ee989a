/**
 * Assembling streamed tool calls from the deltas OpenAI-compatible servers really send.
 *
 * OpenAI sends each call's `index` on every fragment, its `id` and `name` once, and its
 * `arguments` as string pieces. Other servers differ, each documented in its own tracker:
 * - no `index` at all (Gemini's OpenAI endpoint, Ollama before 0.5 — ollama#7881, mistral.rs#1507):
 *   a fragment is slotted by its id, else taken as the continuation of the open call;
 * - `index: 0` for every parallel call, told apart by id (Ollama — ollama#15457, LiteLLM);
 * - the name repeated on every fragment (MiniMax through NVIDIA NIM, Fireworks/Kimi —
 *   hermes-agent#8259) or split across fragments (`term` + `inal`, Gemini — continue#5849);
 * - the name only after the arguments (SGLang — vercel/ai#5885);
 * - an empty `id` on later fragments (DashScope/Qwen — deepchat#355), the id repeated
 *   (koog#2052), or a different id on later fragments of one call (Poolside — pool#9);
 * - `arguments` as a JSON object instead of a string (llama.cpp server — llama.cpp#20198,
 *   MiniMax — oh-my-pi#1779), or whole in one chunk;
 * - the arguments so far resent on every fragment (DeepSeek, Qianfan — hermes-agent#35592),
 *   or the complete arguments resent after the pieces (GLM, proxies — opencode#17339, eliza#16973).
 * The rules below accept all of these without misreading an OpenAI stream.
 */

/** A tool call as the agent loop uses it. */
export type AssembledToolCall = { id: string; name: string; arguments: string };

/** One `delta.tool_calls[]` element, as loosely as servers send it. */
export type ToolCallDelta = {
  index?: unknown;
  id?: unknown;
  function?: { name?: unknown; arguments?: unknown } | null;
};

type Slot = { index?: number; id: string; name: string; nameParts: string[]; args: string };

/** Arguments as a string: a JSON object or array some servers send is serialised, null is nothing. */
export function argumentsText(value: unknown): string {
  if (value === undefined || value === null) return '';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

function completeJson(text: string): boolean {
  const t = text.trim();
  if (!t.startsWith('{') && !t.startsWith('[')) return false;
  try {
    JSON.parse(t);
    return true;
  } catch {
    return false;
  }
}

export class ToolCallAssembler {
  private readonly slots: Slot[] = [];
  private readonly byIndex = new Map<number, Slot>();
  private readonly byId = new Map<string, Slot>();

  /** Takes the `tool_calls` of one delta. */
  add(deltas: readonly ToolCallDelta[] | null | undefined): void {
    if (!Array.isArray(deltas)) return;
    for (const d of deltas) {
      if (!d || typeof d !== 'object') continue;
      const id = typeof d.id === 'string' ? d.id : '';
      const name = typeof d.function?.name === 'string' ? d.function.name : '';
      const args = argumentsText(d.function?.arguments);
      const slot = this.slotFor(typeof d.index === 'number' ? d.index : undefined, id, name, args);
      if (id && !slot.id) {
        slot.id = id;
        this.byId.set(id, slot);
      }
      if (name) this.addName(slot, name);
      if (args) this.addArguments(slot, args);
    }
  }

  private open(index: number | undefined, id: string): Slot {
    const slot: Slot = { index, id: '', name: '', nameParts: [], args: '' };
    this.slots.push(slot);
    if (index !== undefined) this.byIndex.set(index, slot);
    if (id) {
      slot.id = id;
      this.byId.set(id, slot);
    }
    return slot;
  }

  /** Whether a fragment with this id, name and arguments starts a call other than `slot`. */
  private startsAnother(slot: Slot, id: string, name: string, args: string): boolean {
    // A new id with a name is a new call; a new id without a name continues the call (a server
    // that renumbers ids mid-call), unless the call's arguments are already complete.
    if (id && slot.id && id !== slot.id) return name !== '' || completeJson(slot.args);
    if (!name || !slot.name || !completeJson(slot.args)) return false;
    // After a complete call, another tool's name starts another call…
    if (name !== slot.name && !name.startsWith(slot.name)) return true;
    // …and the same name starts one only with other complete arguments and no id tying it to
    // this call (a repeated name alone, or the arguments resent, belong to this call).
    return !id && args !== '' && args !== slot.args && completeJson(args);
  }

  private slotFor(index: number | undefined, id: string, name: string, args: string): Slot {
    if (index !== undefined) {
      const slot = this.byIndex.get(index);
      if (!slot) return this.open(index, id);
      // Several calls may share an index (told apart by id): a known id at this index is its call.
      const known = id ? this.byId.get(id) : undefined;
      if (known && known.index === index) return known;
      return this.startsAnother(slot, id, name, args) ? this.open(index, id) : slot;
    }
    const known = id ? this.byId.get(id) : undefined;
    if (known) return known;
    const last = this.slots[this.slots.length - 1];
    if (!last || this.startsAnother(last, id, name, args)) return this.open(undefined, id);
    return last;
  }

  private addName(slot: Slot, name: string): void {
    slot.nameParts.push(name);
    if (!slot.name || name.startsWith(slot.name)) slot.name = name;
    else if (name !== slot.name) slot.name += name;
  }

  private addArguments(slot: Slot, args: string): void {
    if (!slot.args) {
      slot.args = args;
      return;
    }
    if (args === slot.args && completeJson(args)) return; // the complete arguments, resent
    if (args.length > slot.args.length && args.startsWith(slot.args)) {
      slot.args = args; // the arguments so far, resent with more
      return;
    }
    const t = args.trimStart();
    if ((t.startsWith('{') || t.startsWith('[')) && completeJson(args) && completeJson(slot.args)) {
      slot.args = args; // a complete payload replacing a complete payload
      return;
    }
    slot.args += args;
  }

  /**
   * The calls, in the order they started. With the tool names offered, a name that is not one
   * of them is resolved from its fragments (a split name joined, a repeated one taken once).
   */
  result(knownNames?: ReadonlySet<string>): AssembledToolCall[] {
    const used = new Set<string>();
    const out: AssembledToolCall[] = [];
    this.slots.forEach((slot) => {
      if (!slot.name && !slot.args) return;
      let name = slot.name;
      if (knownNames?.size && !knownNames.has(name)) {
        const candidates = [slot.nameParts.join(''), slot.nameParts[0] ?? '', slot.nameParts[slot.nameParts.length - 1] ?? ''];
        name = candidates.find((c) => knownNames.has(c)) ?? name;
      }
      let id = slot.id || `call_${out.length}`;
      while (used.has(id)) id = `${id}_${out.length}`;
      used.add(id);
      out.push({ id, name, arguments: slot.args });
    });
    return out;
  }
}
