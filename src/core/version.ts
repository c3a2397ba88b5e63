/** A Placement API microversion (1.x), as a request negotiated it. */
export class Version {
  constructor(
    readonly major: number,
    readonly minor: number,
  ) {}

  /** True when this version is at least `minor` (1.x), and at most `max` when given. */
  gte(minor: number): boolean {
    return this.major > 1 || (this.major === 1 && this.minor >= minor)
  }

  lt(minor: number): boolean {
    return !this.gte(minor)
  }

  toString(): string {
    return `${this.major}.${this.minor}`
  }
}
