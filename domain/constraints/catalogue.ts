/**
 * The 32 constraint types of MM-IFEngine (paper Table 5), as reviewed data. Keys are the paper's
 * own where its figures show them; the others follow the same snake_case style. Each type also
 * carries its WildIFEval class (seed 003), generation guidance, the rule functions that can verify
 * it, and what it cannot be combined with.
 */
type MainCategory = 'Rhetoric & Logic' | 'Format limit' | 'Text Length limit' | 'Math limit' | 'Action limit' | 'Keyword';

type WildIfEvalClass = 'Include/Avoid' | 'Editing' | 'Ensure Quality' | 'Length' | 'Format and Structure' | 'Focus/Emphasis' | 'Persona and Role' | 'Style and Tone';

type EvaluationMethod = 'rule' | 'direct_judge' | 'compare_judge' | 'rule_and_direct_judge';

/** Kinds of instruction a constraint may not fit (see domain/constraints/compatibility.ts). */
export type InstructionKind = 'short_answer' | 'short_text' | 'open';

export interface ConstraintType {
  key: string;
  /** Table 5's id and name, e.g. "C.1 Paragraph limit". */
  subclass: string;
  category: MainCategory;
  wildIfEval: WildIfEvalClass;
  evaluation: EvaluationMethod;
  description: string;
  /** Table 5's example first. */
  examples: string[];
  /** Shown to the model beside the description: what makes a good constraint of this type. */
  guidance: string;
  /** Rule functions (verification/functions.ts) that can verify this type; empty: judges only. */
  verifiers: string[];
  /** Types that cannot share a sample with this one (the relation is made symmetric below). */
  conflictsWith: string[];
  /** Instruction kinds this type does not fit. */
  unsuitableFor: InstructionKind[];
}

interface Extra {
  wildIfEval: WildIfEvalClass;
  more?: string[];
  guidance: string;
  verifiers?: string[];
  conflictsWith?: string[];
  unsuitableFor?: InstructionKind[];
}

const t = (key: string, subclass: string, category: MainCategory, evaluation: EvaluationMethod, description: string, example: string, extra: Extra): ConstraintType => ({
  key,
  subclass,
  category,
  wildIfEval: extra.wildIfEval,
  evaluation,
  description,
  examples: [example, ...(extra.more ?? [])],
  guidance: extra.guidance,
  verifiers: extra.verifiers ?? [],
  conflictsWith: extra.conflictsWith ?? [],
  unsuitableFor: extra.unsuitableFor ?? [],
});

const LONG_FORM: InstructionKind[] = ['short_answer', 'short_text'];
const SENTENCES = [
  'check_whether_response_sentence_number_in_range',
  'check_whether_each_paragraph_sentence_number_in_range',
  'check_whether_each_paragraph_sentence_number_in_range_list',
  'check_whether_each_paragraph_sentence_number_exceeds',
];
const WORDS = ['check_whether_response_word_count_in_range', 'check_whether_each_paragraph_word_count_in_range', 'check_whether_each_paragraph_word_count_in_range_list'];
const KEYWORDS = ['check_whether_each_keyword_in_list_mentioned_in_range', 'check_whether_total_keyword_in_list_mentioned_in_range'];
const NOT_CONTAIN = ['check_whether_whole_response_not_contain_certain_substring', 'check_whether_whole_response_not_contain_certain_substrings'];
const BEGIN_END = [
  'check_whether_whole_response_begin_with_certain_substring',
  'check_whether_whole_response_end_with_certain_substring',
  'check_whether_each_sentence_begin_with_certain_substring',
  'check_whether_each_sentence_end_with_certain_substring',
  'check_whether_each_paragraph_begin_with_certain_substring',
  'check_whether_each_paragraph_end_with_certain_substring',
];

export const CONSTRAINT_TYPES: readonly ConstraintType[] = [
  t(
    'rhetoric_requirements',
    'A.1 Rhetoric requirements',
    'Rhetoric & Logic',
    'compare_judge',
    'Constraint that requires the response to use a specific rhetorical technique.',
    'Your output should include a metaphor.',
    {
      wildIfEval: 'Style and Tone',
      more: ['Use a rhetorical question to open the answer.'],
      guidance: 'Name one concrete device (metaphor, simile, rhetorical question, alliteration) that fits the task.',
    },
  ),
  t(
    'logical_relation',
    'A.2 Logical relation',
    'Rhetoric & Logic',
    'direct_judge',
    'Constraint that ensures logical cohesion within the response by requiring specific logical connectors or structures.',
    'Each paragraph must contain at least one cause-and-effect relationship.',
    {
      wildIfEval: 'Ensure Quality',
      more: ['Connect each point to the next with a clear "because" or "therefore".'],
      guidance: 'Ask for a visible reasoning structure (cause and effect, contrast, condition), not for correctness.',
    },
  ),
  t(
    'language_requirements',
    'B.1 Natural language',
    'Format limit',
    'direct_judge',
    'Constraint specifying which natural language(s) should be used in the response.',
    'Please answer in Spanish.',
    {
      wildIfEval: 'Style and Tone',
      more: ['Answer in French, then give a one-sentence English summary.'],
      guidance: 'Name the language(s) explicitly; keep the task answerable in them.',
      conflictsWith: ['mention', 'multiple_mention', 'not_mention', 'keyword_variation'],
    },
  ),
  t(
    'part_of_speech_requirements',
    'B.2 Part of speech',
    'Format limit',
    'direct_judge',
    'Constraint that requires the response to use a specific part of speech.',
    'Use at least three adjectives in your response.',
    { wildIfEval: 'Style and Tone', guidance: 'Ask for a countable use of a part of speech (at least N adjectives, no adverbs).' },
  ),
  t(
    'sentence_structure_requirements',
    'B.3 Sentence structure',
    'Format limit',
    'direct_judge',
    'Constraint that specifies special sentence structures to be used in the response.',
    'Write each sentence so it includes a parenthetical phrase.',
    {
      wildIfEval: 'Format and Structure',
      more: ['Use only compound sentences.'],
      guidance: 'Describe a structure every sentence can carry without harming the content.',
      unsuitableFor: ['short_answer'],
    },
  ),
  t(
    'tense_requirements',
    'B.4 Tense requirements',
    'Format limit',
    'direct_judge',
    'Constraint that specifies the use of multiple tenses within the response.',
    'In past tense totally.',
    { wildIfEval: 'Style and Tone', more: ['Use present tense in the first paragraph and past tense in the second.'], guidance: 'Name the tense(s) and where each applies.' },
  ),
  t(
    'punctuation_requirements',
    'B.5 Punctuation',
    'Format limit',
    'rule',
    'Constraint specifying unconventional yet feasible punctuation usage in the response.',
    'Replace all periods with semicolons.',
    {
      wildIfEval: 'Format and Structure',
      more: ['End every sentence with an exclamation mark.'],
      guidance: 'Ask for unusual but readable punctuation that a rule can check (a sentence ending, a forbidden mark).',
      verifiers: ['check_whether_each_sentence_end_with_certain_substring', ...NOT_CONTAIN],
      conflictsWith: ['sentence_number_limit', 'strict_formatting_requirements'],
    },
  ),
  t(
    'highlight_requirements',
    'B.6 Highlight',
    'Format limit',
    'direct_judge',
    'Constraint that specifies a unique but manageable method for highlighting text.',
    'Use **bold** for every noun.',
    {
      wildIfEval: 'Focus/Emphasis',
      more: ["Use **bold** for the first occurrence of the term 'aggressive behavior' in each paragraph."],
      guidance: 'Name the markup (bold, italics, CAPS) and exactly what gets it.',
      conflictsWith: ['strict_formatting_requirements'],
    },
  ),
  t(
    'title_requirements',
    'B.7 Title requirements',
    'Format limit',
    'direct_judge',
    'Constraint that specifies how titles should be added to the response.',
    'Provide a concise title that summarizes the main idea.',
    {
      wildIfEval: 'Format and Structure',
      more: ['Give the answer a title wrapped in double angular brackets, like <<title>>.'],
      guidance: 'Say where the title goes and what it summarizes.',
      conflictsWith: ['strict_formatting_requirements'],
      unsuitableFor: LONG_FORM,
    },
  ),
  t(
    'style_requirements',
    'B.8 Style requirements',
    'Format limit',
    'compare_judge',
    'Constraint that specifies an unconventional or distinctive writing style for the response.',
    'Write the answer in the form of a brief detective story.',
    {
      wildIfEval: 'Style and Tone',
      more: ['Write the answer as a diary entry.'],
      guidance: 'Name a recognisable genre or register that changes how the answer reads.',
      conflictsWith: ['strict_formatting_requirements', 'unstrict_formatting_requirements'],
      unsuitableFor: ['short_answer'],
    },
  ),
  t(
    'case_requirements',
    'B.9 Case requirements',
    'Format limit',
    'direct_judge',
    'Constraint specifying an unusual yet readable approach to letter case in the response.',
    'Write all nouns in UPPERCASE and all adjectives in lowercase.',
    { wildIfEval: 'Format and Structure', more: ['Write the entire answer in lowercase letters.'], guidance: 'Ask for an unusual but readable casing rule.' },
  ),
  t(
    'unstrict_formatting_requirements',
    'B.10 Unstrict format',
    'Format limit',
    'direct_judge',
    'Constraint specifying a unique format for the output while keeping it approachable.',
    'Format your response as a short play script with speaker labels.',
    {
      wildIfEval: 'Format and Structure',
      more: ['Number the reasons for your analysis.'],
      guidance: 'Describe a layout (script, log entry, Q&A) that keeps the answer natural.',
      conflictsWith: ['strict_formatting_requirements'],
      unsuitableFor: ['short_answer'],
    },
  ),
  t(
    'strict_formatting_requirements',
    'B.11 Strict format',
    'Format limit',
    'direct_judge',
    'Constraint that requires the response to follow a strictly defined format.',
    'Please provide the output as well-formed XML with custom tags.',
    {
      wildIfEval: 'Format and Structure',
      more: ['Return the answer as a JSON object with keys "summary" and "details".'],
      guidance: 'Name a machine-readable format (JSON, XML, CSV, Markdown table) and its fields.',
      conflictsWith: ['paragraph_number_limit', 'sentence_number_limit', 'wrap_up_requirement', 'prefix_and_suffix', 'number_and_list_requirements'],
    },
  ),
  t(
    'number_and_list_requirements',
    'B.12 Number and List',
    'Format limit',
    'direct_judge',
    'Constraint for using numbered or bulleted lists in the response.',
    'Present all key points as a numbered list with bulleted sub-lists.',
    {
      wildIfEval: 'Format and Structure',
      more: ['List exactly three key points as bullet points.'],
      guidance: 'Say numbered or bulleted, and how many items.',
      unsuitableFor: ['short_answer'],
    },
  ),
  t(
    'wrap_up_requirement',
    'B.13 Wrap up',
    'Format limit',
    'direct_judge',
    'Constraint that requires a concise, well-structured summary or conclusion.',
    'Provide a final paragraph summarizing the key arguments.',
    {
      wildIfEval: 'Format and Structure',
      more: ['Conclude with a single sentence summarizing the likely behavior.'],
      guidance: 'Ask for a closing summary of a stated length.',
      unsuitableFor: LONG_FORM,
    },
  ),
  t(
    'first_letter_requirements',
    'B.14 First letter',
    'Format limit',
    'direct_judge',
    'Constraint specifying a pattern for the first letters of sentences or paragraphs.',
    'Each sentence should begin with a letter that progresses through the alphabet.',
    {
      wildIfEval: 'Format and Structure',
      more: ['Start each paragraph with a word beginning with the letter S.'],
      guidance: 'Give a letter pattern the answer can follow without becoming unreadable.',
      unsuitableFor: ['short_answer'],
    },
  ),
  t(
    'paragraph_number_limit',
    'C.1 Paragraph limit',
    'Text Length limit',
    'rule',
    'Constraint that specifies the number of paragraphs in the response.',
    'Your response must consist of exactly 4 paragraphs.',
    {
      wildIfEval: 'Length',
      more: ['Your response must consist of at least 2 paragraphs.'],
      guidance: 'Use an exact small count (2-5) or a range; paragraphs are separated by a blank line.',
      verifiers: ['check_whether_response_paragraph_number_in_range'],
      unsuitableFor: LONG_FORM,
    },
  ),
  t(
    'sentence_number_limit',
    'C.2 Sentence limit',
    'Text Length limit',
    'rule',
    'Constraint that specifies the number of sentences in each paragraph.',
    'Totally use 5 sentences in your response.',
    {
      wildIfEval: 'Length',
      more: ['Each paragraph should contain between 3 and 5 sentences.'],
      guidance: 'Give a per-paragraph range or a total; keep counts moderate.',
      verifiers: SENTENCES,
      unsuitableFor: ['short_answer'],
    },
  ),
  t(
    'word_count_range_limit',
    'C.3 Word limit',
    'Text Length limit',
    'rule',
    'Constraint that specifies a small range for the total number of words in the text.',
    'Your response must be a single word or phrase.',
    {
      wildIfEval: 'Length',
      more: ['Please write between 150 and 200 words in total.'],
      guidance: 'Give a range, not an exact count ("between 100 and 150 words").',
      verifiers: WORDS,
      unsuitableFor: ['short_answer'],
    },
  ),
  t(
    'precision',
    'D.1 Precision',
    'Math limit',
    'rule',
    'Constraint that specifies the level of precision required in mathematical calculations.',
    'Keep two decimal places for all numbers in the answer.',
    {
      wildIfEval: 'Format and Structure',
      more: ['Do not include specific numbers in your answer; compare quantities by their relative sizes.'],
      guidance: 'Fix the number of decimals, rounding, or the absence of numbers.',
      verifiers: ['check_number_precision_in_response', 'check_percentage_number_precision_in_response', 'check_whether_has_no_arabic_number_in_response'],
    },
  ),
  t(
    'scientific_notation',
    'D.2 Scientific notation',
    'Math limit',
    'rule',
    'Constraint that requires the use of scientific notation for large or small numbers.',
    'Express all numbers greater than 1,000 in scientific notation.',
    { wildIfEval: 'Format and Structure', guidance: 'Say which numbers and how many significant digits.', verifiers: ['check_scientific_notation_precision_in_response'] },
  ),
  t(
    'role_imitation',
    'E.1 Role imitation',
    'Action limit',
    'compare_judge',
    'Constraint requiring the response to imitate the tone and style of a specific role or public figure.',
    'Please answer in the style of a sports commentator.',
    {
      wildIfEval: 'Persona and Role',
      more: ['Answer as a museum tour guide would.'],
      guidance: 'Name a role whose voice is recognisable in a short answer.',
      conflictsWith: ['strict_formatting_requirements'],
    },
  ),
  t(
    'prefix_and_suffix',
    'E.2 Prefix and Suffix',
    'Action limit',
    'rule',
    'Constraint that requires the response to begin or end with a specific phrase or symbol.',
    "Please start your answer with 'Once upon a time...'",
    {
      wildIfEval: 'Format and Structure',
      more: ["End your response with 'Is there anything else I can help with?'"],
      guidance: 'Quote the exact opening or closing phrase.',
      verifiers: BEGIN_END,
    },
  ),
  t(
    'tone_requirement',
    'E.3 Tone requirement',
    'Action limit',
    'compare_judge',
    'Constraint specifying an emotional tone for the response.',
    'Write your answer in a positive and encouraging tone.',
    { wildIfEval: 'Style and Tone', more: ['Adopt a reassuring, empathetic tone.'], guidance: 'Name one emotional tone that fits the task.' },
  ),
  t(
    'perspective_requirement',
    'E.4 Perspective',
    'Action limit',
    'direct_judge',
    'Constraint that specifies a narrative perspective for the response.',
    'Write your answer in the first-person singular as a personal account.',
    {
      wildIfEval: 'Persona and Role',
      more: ['Please answer the question in the second person.'],
      guidance: 'Name the grammatical person (first, second, third) or a point of view.',
      unsuitableFor: ['short_answer'],
    },
  ),
  t(
    'target_audience_requirement',
    'E.5 Target audience',
    'Action limit',
    'compare_judge',
    'Constraint requiring the response to be tailored for a specific audience.',
    'Craft your response as if explaining to high school students.',
    { wildIfEval: 'Persona and Role', more: ['Your audience is a dog lover.'], guidance: 'Name an audience whose needs change the wording.' },
  ),
  t(
    'situation_requirement',
    'E.6 Situation',
    'Action limit',
    'compare_judge',
    'Constraint requiring the response to be set in a specific situation or scenario.',
    'Answer as if you are giving safety instructions before a flight.',
    { wildIfEval: 'Persona and Role', guidance: 'Set a concrete scenario the answer is delivered in.', unsuitableFor: ['short_answer'] },
  ),
  t(
    'prior_condition',
    'E.7 Prior condition',
    'Action limit',
    'direct_judge',
    'Constraint stating that when a specific condition is met, the response must follow a particular process.',
    'If the user requests legal advice, begin with a disclaimer.',
    { wildIfEval: 'Ensure Quality', guidance: 'State a condition and the behaviour it triggers; the condition should be decidable from the image or task.' },
  ),
  t(
    'mention',
    'F.1 Mention',
    'Keyword',
    'rule_and_direct_judge',
    'Constraint that requires including a specific keyword a certain number of times.',
    "Mention 'GreenTech' exactly three times throughout.",
    {
      wildIfEval: 'Include/Avoid',
      more: ["Mention the word 'midpoint' at least three times throughout your description."],
      guidance: 'Quote the keyword and give a count ("at least twice", "exactly three times").',
      verifiers: KEYWORDS,
    },
  ),
  t(
    'not_mention',
    'F.2 Not mention',
    'Keyword',
    'rule_and_direct_judge',
    'Constraint that requires avoiding specific keywords or phrases.',
    "Do not mention the words 'budget' or 'investment'.",
    {
      wildIfEval: 'Include/Avoid',
      more: ["Please do not mention the words 'formula' or 'equation' in your answer."],
      guidance: 'Quote every forbidden word; choose words the answer would naturally use.',
      verifiers: NOT_CONTAIN,
    },
  ),
  t(
    'multiple_mention',
    'F.3 Multiple mention',
    'Keyword',
    'rule_and_direct_judge',
    'Constraint requiring including multiple specified keywords in a balanced manner.',
    "Mention both 'sustainability' and 'renewable energy' at least twice.",
    { wildIfEval: 'Include/Avoid', guidance: 'Quote two or three keywords and a shared count.', verifiers: KEYWORDS },
  ),
  t(
    'keyword_variation',
    'F.4 Keyword variation',
    'Keyword',
    'direct_judge',
    'Constraint requiring the use of synonyms or variations of a given keyword.',
    "Use at least three synonyms for 'innovation' throughout your text.",
    { wildIfEval: 'Focus/Emphasis', guidance: 'Quote the keyword and how many distinct variations to use.' },
  ),
];

export const CONSTRAINT_KEYS: readonly string[] = CONSTRAINT_TYPES.map((c) => c.key);

const BY_KEY = new Map(CONSTRAINT_TYPES.map((c) => [c.key, c]));

/** Declared conflicts, made symmetric: a declaration on either side is enough. */
const CONFLICTS = new Map<string, Set<string>>(CONSTRAINT_TYPES.map((c) => [c.key, new Set(c.conflictsWith)]));
for (const c of CONSTRAINT_TYPES) for (const other of c.conflictsWith) CONFLICTS.get(other)?.add(c.key);

export function typesConflict(a: string, b: string): boolean {
  return CONFLICTS.get(a)?.has(b) ?? false;
}

export function constraintType(key: string): ConstraintType | undefined {
  return BY_KEY.get(key);
}
