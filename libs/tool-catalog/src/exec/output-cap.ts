/**
 * Keeps the head and the tail of a command's output within a byte budget:
 * errors usually come last, so the end is worth more than the middle.
 */
export class CappedOutput {
  private head = "";
  private tail = "";
  private headBytes = 0;
  private droppedBytes = 0;
  private readonly headBudget: number;
  private readonly tailBudget: number;

  constructor(capBytes: number) {
    this.headBudget = Math.floor(capBytes * 0.4);
    this.tailBudget = capBytes - this.headBudget;
  }

  push(chunk: string): void {
    if (this.headBytes < this.headBudget) {
      const room = this.headBudget - this.headBytes;
      const taken = chunk.slice(0, room);
      this.head += taken;
      this.headBytes += taken.length;
      chunk = chunk.slice(taken.length);
    }
    if (chunk === "") return;
    this.tail += chunk;
    if (this.tail.length > this.tailBudget) {
      const excess = this.tail.length - this.tailBudget;
      this.droppedBytes += excess;
      this.tail = this.tail.slice(excess);
    }
  }

  get truncated(): boolean {
    return this.droppedBytes > 0;
  }

  get dropped(): number {
    return this.droppedBytes;
  }

  text(): string {
    if (!this.truncated) return this.head + this.tail;
    return `${this.head}\n[… output truncated: ${this.droppedBytes} characters omitted …]\n${this.tail}`;
  }
}
