import type { Db } from './database.ts';
import { JobsRepo } from './advanced-jobs.ts';
import { AuditLogRepo } from './audit-log.ts';
import { AutoReadRepo } from './auto-read-channels.ts';
import { DictionaryRepo } from './dictionary-entries.ts';
import { DictionaryCache } from './dictionary-cache.ts';
import { PersonalDictionaryRepo } from './personal-dictionary.ts';
import { HistoryRepo } from './generation-history.ts';
import { GuildControlsRepo } from './guild-controls.ts';
import { GuildSettingsRepo } from './guild-settings.ts';
import { RoleAllowancesRepo } from './role-allowances.ts';
import { DailySpendReport } from './ledger-daily.ts';
import { UserSettingsRepo } from './user-settings.ts';
import { ReadingListsRepo } from './reading-lists.ts';
import { ReadingSettingsRepo } from './reading-settings.ts';
import { VoicePoolRepo } from './voice-pool.ts';
import { TextFiltersRepo } from './text-filters.ts';
import { DictionarySharingRepo } from './dictionary-sharing.ts';
import { systemClock, type Clock } from '../util/clock.ts';

// Each table has one module in src/db that owns it: its SQL (statements prepared once), its row
// mapping and its transactions (writes never wait on the audio thread: write.ts).
// The use cases above hold the policy and call these; the types they share live in src/domain.
// This file assembles the repositories the bot uses (each name has one door: its own module).

export interface Repositories {
  guildSettings: GuildSettingsRepo;
  autoRead: AutoReadRepo;
  userSettings: UserSettingsRepo;
  dictionary: DictionaryRepo;
  /** Each member's own readings, in every server (migrations/011); applied by dictionary.list(guild, member). */
  personalDictionary: PersonalDictionaryRepo;
  history: HistoryRepo;
  jobs: JobsRepo;
  /** Dictionary editors, /narrate confirmation threshold. */
  controls: GuildControlsRepo;
  roleAllowances: RoleAllowancesRepo;
  /** /usage's spend by day (read-only over the ledger). */
  dailySpend: DailySpendReport;
  /** Who and what auto-read reads (migrations/008). */
  reading: ReadingSettingsRepo;
  readingLists: ReadingListsRepo;
  /** The voices members without one of their own are given (migrations/020). */
  voicePool: VoicePoolRepo;
  /** Who changed a server's settings or dictionary, when (migrations/014; the dashboard shows it). */
  audit: AuditLogRepo;
  /** Words and patterns never read or read as another word, and the flood limit (migrations/021). */
  filters: TextFiltersRepo;
  /** Which servers let others follow their dictionary, and what each follows (migrations/022; read by dictionary.list). */
  sharing: DictionarySharingRepo;
}

/** Every repository over one open (migrated) database. */
export function createRepositories(db: Db, options: { clock?: Clock; dictionaryCacheChars?: number } = {}): Repositories {
  const clock = options.clock ?? systemClock;
  // One bound for every dictionary list kept for reading, the servers' and the members' together.
  const dictionaryCache = new DictionaryCache(options.dictionaryCacheChars);
  const personalDictionary = new PersonalDictionaryRepo(db, clock, dictionaryCache);
  const sharing = new DictionarySharingRepo(db, clock);
  return {
    guildSettings: new GuildSettingsRepo(db, clock),
    autoRead: new AutoReadRepo(db, clock),
    userSettings: new UserSettingsRepo(db, clock),
    dictionary: new DictionaryRepo(db, clock, personalDictionary, dictionaryCache, sharing),
    personalDictionary,
    history: new HistoryRepo(db, clock),
    jobs: new JobsRepo(db, clock),
    controls: new GuildControlsRepo(db, clock),
    roleAllowances: new RoleAllowancesRepo(db, clock),
    dailySpend: new DailySpendReport(db),
    reading: new ReadingSettingsRepo(db, clock),
    readingLists: new ReadingListsRepo(db, clock),
    voicePool: new VoicePoolRepo(db, clock),
    audit: new AuditLogRepo(db, clock),
    filters: new TextFiltersRepo(db, clock, dictionaryCache),
    sharing,
  };
}
