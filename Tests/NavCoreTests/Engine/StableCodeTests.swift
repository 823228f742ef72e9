import NavCore
import Testing

/// The codes clients match on, spelled by ``StableCode``'s rule: each list is the contract
/// (openapi.yaml, docs/design.md, "Errors and codes"), so a renamed case fails here instead of
/// changing what clients see.
@Suite struct StableCodeTests {
    @Test func refusalCodes() {
        #expect(
            NavError.Code.allCases.map(\.name) == [
                "invalid_path", "invalid_request", "unknown_scene", "unknown_transition", "invalid_params", "transition_refused",
                "not_removable", "stack_underflow", "stack_too_deep", "not_found", "unknown_command", "command_refused",
                "confirmation_required", "upgrade_refused"
            ])
    }

    @Test func graphIssueCodes() {
        #expect(
            GraphIssue.Code.allCases.map(\.name) == [
                "invalid_json", "invalid_type", "missing_field", "unknown_field", "invalid_name", "reserved_name", "unknown_scene",
                "invalid_template", "invalid_start", "invalid_param_schema", "invalid_tabs", "invalid_pointer", "invalid_redirect",
                "redirect_cycle", "too_large"
            ])
    }
}
