/**
 * Holds the emulator's answers while shut: given as the emulator's `sleep`, each request waits for the gate to
 * open instead of its usual latency, so a test can act (delete, edit, leave) while a request is on its way.
 */
export function emulatorGate() {
  let shut: { promise: Promise<void>; open: () => void } | null = null;
  return {
    hold(): void {
      let open!: () => void;
      const promise = new Promise<void>((resolve) => (open = resolve));
      shut = { promise, open };
    },
    release(): void {
      shut?.open();
      shut = null;
    },
    sleep: (ms: number): Promise<void> => shut?.promise ?? new Promise<void>((resolve) => setTimeout(resolve, ms)),
  };
}
