//! The JavaScript `CodeAgent` prompt (§14): the system prompt template of §14.2, its example
//! exchanges of §14.3, and the tool signatures it embeds as `{{{tools_prompt}}}`.
//!
//! The templates keep the placeholders of smolagents-ts's template loader
//! (`{{code_block_opening_tag}}`, `{{code_block_closing_tag}}`, `{{{tools_prompt}}}`,
//! `{{authorized_imports}}`, `{{#if custom_instructions}}`): clients render them with their own
//! Handlebars, so nothing here renders templates.

pub mod tools;

/// The system prompt of §14.2, verbatim.
pub const CODE_AGENT_SYSTEM_PROMPT: &str = include_str!("text/system_prompt.txt");

/// The four example exchanges of §14.3 (A to D), verbatim.
pub const CODE_AGENT_EXAMPLES: [&str; 4] = [
    include_str!("text/example_document_qa.txt"),
    include_str!("text/example_arithmetic.txt"),
    include_str!("text/example_translate_image_qa.txt"),
    include_str!("text/example_compare_population.txt"),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_system_prompt_keeps_the_template_loader_placeholders() {
        for placeholder in [
            "{{code_block_opening_tag}}",
            "{{code_block_closing_tag}}",
            "{{{tools_prompt}}}",
            "{{authorized_imports}}",
            "{{#if custom_instructions}}",
            "{{custom_instructions}}",
            "{{/if}}",
        ] {
            assert!(
                CODE_AGENT_SYSTEM_PROMPT.contains(placeholder),
                "missing {placeholder}"
            );
        }
    }

    #[test]
    fn the_prompt_follows_the_migration_rules_of_14_1() {
        let prompt = CODE_AGENT_SYSTEM_PROMPT;
        assert!(prompt.contains("JavaScript code blobs"));
        assert!(prompt.contains("console.log(...)"));
        assert!(prompt.contains("final_answer(value)"));
        assert!(prompt.contains("Thought:"));
        assert!(!prompt.contains("Python") && !prompt.contains("print("));
    }

    #[test]
    fn every_example_shows_code_blocks_and_ends_with_final_answer() {
        for example in CODE_AGENT_EXAMPLES {
            assert!(example.starts_with("Task:"));
            assert!(example.contains("{{code_block_opening_tag}}"));
            assert!(example.contains("final_answer("));
            assert!(!example.contains("print("));
        }
    }
}
