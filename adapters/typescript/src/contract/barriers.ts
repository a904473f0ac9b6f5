// Named barriers [ext]: a reply that names a barrier waits until the barrier
// is released. A release is sticky (later waits pass at once) until reset;
// releaseAll (shutdown) lets every held reply go and every later one pass.

export class Barriers {
  private readonly released = new Set<string>();
  private readonly held = new Map<string, (() => void)[]>();
  private allReleased = false;

  /** Resolves once `name` is released (at once when it already is). */
  wait(name: string): Promise<void> {
    if (this.allReleased || this.released.has(name)) return Promise.resolve();
    return new Promise((resolve) => {
      const waiters = this.held.get(name) ?? [];
      waiters.push(resolve);
      this.held.set(name, waiters);
    });
  }

  /** Releases `name`: its held replies go, and later ones pass until reset. */
  release(name: string): void {
    this.released.add(name);
    const waiters = this.held.get(name) ?? [];
    this.held.delete(name);
    for (const resolve of waiters) resolve();
  }

  /** Forgets every release; replies still held stay held. */
  reset(): void {
    this.released.clear();
  }

  /** Releases every barrier, held or not, for good (shutdown). */
  releaseAll(): void {
    this.allReleased = true;
    for (const name of [...this.held.keys()]) this.release(name);
  }

  /** How many replies are held now. */
  get heldCount(): number {
    let count = 0;
    for (const waiters of this.held.values()) count += waiters.length;
    return count;
  }
}
