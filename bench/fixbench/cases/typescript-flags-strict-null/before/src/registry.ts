export interface Flag {
  name: string;
  enabled: boolean;
  /** Share of users (0-100) who get the flag when it is enabled. */
  percentage: number;
  /** Users who always get the flag, whatever the percentage. */
  allowList: string[];
}

export class FlagRegistry {
  private readonly flags = new Map<string, Flag>();

  constructor(flags: Flag[] = []) {
    for (const flag of flags) this.flags.set(flag.name, flag);
  }

  /** The flag called `name`; throws for a name nobody registered, which is a typo in the caller. */
  get(name: string): Flag {
    const flag = this.flags.get(name);
    if (!flag) throw new Error(`unknown feature flag: ${name}`);
    return flag;
  }

  names(): string[] {
    return [...this.flags.keys()].sort();
  }
}
