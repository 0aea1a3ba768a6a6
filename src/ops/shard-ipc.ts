// The manager <-> bot process messages (over the IPC channel discord.js's
// ShardingManager opens). A process answers the topics it registered; the manager's collect()
// gathers the answers (src/ops/shard-manager.ts). Topics: 'status' and 'metrics'.

export interface CollectRequest {
  yomiage: 'collect';
  topic: string;
  nonce: number;
}

export interface CollectAnswer {
  yomiage: 'collected';
  nonce: number;
  value?: unknown;
  /** Set when the topic is unknown here or its provider failed (never a secret: a code). */
  error?: string;
}

function isCollectRequest(message: unknown): message is CollectRequest {
  const m = message as Partial<CollectRequest> | null;
  return m?.yomiage === 'collect' && typeof m.topic === 'string' && typeof m.nonce === 'number';
}

const providers = new Map<string, () => unknown>();
let listening = false;

/**
 * Answers the manager's `collect(topic)` with `provide()` (sync or async). Does nothing in a
 * process that no manager started (no IPC channel). Returns a function that unregisters it.
 */
export function answerCollect(topic: string, provide: () => unknown): () => void {
  providers.set(topic, provide);
  if (!listening && typeof process.send === 'function') {
    listening = true;
    process.on('message', (message) => {
      if (!isCollectRequest(message)) return;
      void answer(message).then((a) => process.send?.(a, undefined, undefined, () => {}));
    });
  }
  return () => void (providers.get(topic) === provide && providers.delete(topic));
}

async function answer(request: CollectRequest): Promise<CollectAnswer> {
  const provide = providers.get(request.topic);
  if (!provide) return { yomiage: 'collected', nonce: request.nonce, error: 'unknown_topic' };
  try {
    return { yomiage: 'collected', nonce: request.nonce, value: await provide() };
  } catch {
    return { yomiage: 'collected', nonce: request.nonce, error: 'provider_failed' };
  }
}
