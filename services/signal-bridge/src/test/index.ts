export {
  type FakeMessage,
  type FakeSignalCli,
  type RecordedCall,
  type RpcAnswer,
  receivedMessage,
  startFakeSignalCli,
} from "./fake-signal-cli.js";
