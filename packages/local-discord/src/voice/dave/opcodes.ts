/** Voice gateway opcodes of the DAVE protocol (daveprotocol.com, "Voice Gateway Opcodes"). */
export const DaveOp = {
  ClientsConnect: 11,
  ClientDisconnect: 13,
  PrepareTransition: 21,
  ExecuteTransition: 22,
  ReadyForTransition: 23,
  PrepareEpoch: 24,
  MlsExternalSenderPackage: 25,
  MlsKeyPackage: 26,
  MlsProposals: 27,
  MlsCommitWelcome: 28,
  MlsAnnounceCommitTransition: 29,
  MlsWelcome: 30,
  MlsInvalidCommitWelcome: 31,
} as const;

/** DAVE ops the server sends as binary (`u16 seq, u8 op, payload`); the client's are `u8 op, payload`. */
export const BINARY_DAVE_OPS: ReadonlySet<number> = new Set([
  DaveOp.MlsExternalSenderPackage,
  DaveOp.MlsKeyPackage,
  DaveOp.MlsProposals,
  DaveOp.MlsCommitWelcome,
  DaveOp.MlsAnnounceCommitTransition,
  DaveOp.MlsWelcome,
]);

/** The DAVE protocol version the fake speaks (and @snazzah/davey 0.1 supports). */
export const DAVE_PROTOCOL_VERSION = 1;
