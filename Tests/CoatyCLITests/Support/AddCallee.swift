import CoatyCommunication
import CoatyModel

/// The answer of the test agents' `com.example.add`: the sum of two integer parameters, or a JSON-RPC
/// "Invalid params" error for anything else.
func answerAdd(_ call: CallEvent) throws {
    if let a = call.parameter(at: 0)?.intValue, let b = call.parameter(at: 1)?.intValue {
        try call.returnResult(.int(a + b))
    } else {
        try call.returnError(RemoteCallError(code: -32602, message: "Invalid params"))
    }
}
