/**
 * The 32 constraint types of MM-IFEngine (paper Table 5), as reviewed data. Keys are the paper's
 * own where its figures show them; the others follow the same snake_case style.
 */
export type MainCategory =
  | 'Rhetoric & Logic'
  | 'Format limit'
  | 'Text Length limit'
  | 'Math limit'
  | 'Action limit'
  | 'Keyword';

export type EvaluationMethod = 'rule' | 'direct_judge' | 'compare_judge' | 'rule_and_direct_judge';

export interface ConstraintType {
  key: string;
  /** Table 5's id and name, e.g. "C.1 Paragraph limit". */
  subclass: string;
  category: MainCategory;
  evaluation: EvaluationMethod;
  description: string;
  example: string;
}

const t = (
  key: string,
  subclass: string,
  category: MainCategory,
  evaluation: EvaluationMethod,
  description: string,
  example: string,
): ConstraintType => ({ key, subclass, category, evaluation, description, example });

export const CONSTRAINT_TYPES: readonly ConstraintType[] = [
  t('rhetoric_requirements', 'A.1 Rhetoric requirements', 'Rhetoric & Logic', 'compare_judge',
    'Constraint that requires the response to use a specific rhetorical technique.',
    'Your output should include a metaphor.'),
  t('logical_relation', 'A.2 Logical relation', 'Rhetoric & Logic', 'direct_judge',
    'Constraint that ensures logical cohesion within the response by requiring specific logical connectors or structures.',
    'Each paragraph must contain at least one cause-and-effect relationship.'),
  t('language_requirements', 'B.1 Natural language', 'Format limit', 'direct_judge',
    'Constraint specifying which natural language(s) should be used in the response.',
    'Please answer in Spanish.'),
  t('part_of_speech_requirements', 'B.2 Part of speech', 'Format limit', 'direct_judge',
    'Constraint that requires the response to use a specific part of speech.',
    'Use at least three adjectives in your response.'),
  t('sentence_structure_requirements', 'B.3 Sentence structure', 'Format limit', 'direct_judge',
    'Constraint that specifies special sentence structures to be used in the response.',
    'Write each sentence so it includes a parenthetical phrase.'),
  t('tense_requirements', 'B.4 Tense requirements', 'Format limit', 'direct_judge',
    'Constraint that specifies the use of multiple tenses within the response.',
    'In past tense totally.'),
  t('punctuation_requirements', 'B.5 Punctuation', 'Format limit', 'rule',
    'Constraint specifying unconventional yet feasible punctuation usage in the response.',
    'Replace all periods with semicolons.'),
  t('highlight_requirements', 'B.6 Highlight', 'Format limit', 'direct_judge',
    'Constraint that specifies a unique but manageable method for highlighting text.',
    'Use **bold** for every noun.'),
  t('title_requirements', 'B.7 Title requirements', 'Format limit', 'direct_judge',
    'Constraint that specifies how titles should be added to the response.',
    'Provide a concise title that summarizes the main idea.'),
  t('style_requirements', 'B.8 Style requirements', 'Format limit', 'compare_judge',
    'Constraint that specifies an unconventional or distinctive writing style for the response.',
    'Write the answer in the form of a brief detective story.'),
  t('case_requirements', 'B.9 Case requirements', 'Format limit', 'direct_judge',
    'Constraint specifying an unusual yet readable approach to letter case in the response.',
    'Write all nouns in UPPERCASE and all adjectives in lowercase.'),
  t('unstrict_formatting_requirements', 'B.10 Unstrict format', 'Format limit', 'direct_judge',
    'Constraint specifying a unique format for the output while keeping it approachable.',
    'Format your response as a short play script with speaker labels.'),
  t('strict_formatting_requirements', 'B.11 Strict format', 'Format limit', 'direct_judge',
    'Constraint that requires the response to follow a strictly defined format.',
    'Please provide the output as well-formed XML with custom tags.'),
  t('number_and_list_requirements', 'B.12 Number and List', 'Format limit', 'direct_judge',
    'Constraint for using numbered or bulleted lists in the response.',
    'Present all key points as a numbered list with bulleted sub-lists.'),
  t('wrap_up_requirement', 'B.13 Wrap up', 'Format limit', 'direct_judge',
    'Constraint that requires a concise, well-structured summary or conclusion.',
    'Provide a final paragraph summarizing the key arguments.'),
  t('first_letter_requirements', 'B.14 First letter', 'Format limit', 'direct_judge',
    'Constraint specifying a pattern for the first letters of sentences or paragraphs.',
    'Each sentence should begin with a letter that progresses through the alphabet.'),
  t('paragraph_number_limit', 'C.1 Paragraph limit', 'Text Length limit', 'rule',
    'Constraint that specifies the number of paragraphs in the response.',
    'Your response must consist of exactly 4 paragraphs.'),
  t('sentence_number_limit', 'C.2 Sentence limit', 'Text Length limit', 'rule',
    'Constraint that specifies the number of sentences in each paragraph.',
    'Totally use 5 sentences in your response.'),
  t('word_count_range_limit', 'C.3 Word limit', 'Text Length limit', 'rule',
    'Constraint that specifies a small range for the total number of words in the text.',
    'Your response must be a single word or phrase.'),
  t('precision', 'D.1 Precision', 'Math limit', 'rule',
    'Constraint that specifies the level of precision required in mathematical calculations.',
    'Keep two decimal places for all numbers in the answer.'),
  t('scientific_notation', 'D.2 Scientific notation', 'Math limit', 'rule',
    'Constraint that requires the use of scientific notation for large or small numbers.',
    'Express all numbers greater than 1,000 in scientific notation.'),
  t('role_imitation', 'E.1 Role imitation', 'Action limit', 'compare_judge',
    'Constraint requiring the response to imitate the tone and style of a specific role or public figure.',
    'Please answer in the style of a sports commentator.'),
  t('prefix_and_suffix', 'E.2 Prefix and Suffix', 'Action limit', 'rule',
    'Constraint that requires the response to begin or end with a specific phrase or symbol.',
    "Please start your answer with 'Once upon a time...'"),
  t('tone_requirement', 'E.3 Tone requirement', 'Action limit', 'compare_judge',
    'Constraint specifying an emotional tone for the response.',
    'Write your answer in a positive and encouraging tone.'),
  t('perspective_requirement', 'E.4 Perspective', 'Action limit', 'direct_judge',
    'Constraint that specifies a narrative perspective for the response.',
    'Write your answer in the first-person singular as a personal account.'),
  t('target_audience_requirement', 'E.5 Target audience', 'Action limit', 'compare_judge',
    'Constraint requiring the response to be tailored for a specific audience.',
    'Craft your response as if explaining to high school students.'),
  t('situation_requirement', 'E.6 Situation', 'Action limit', 'compare_judge',
    'Constraint requiring the response to be set in a specific situation or scenario.',
    'Answer as if you are giving safety instructions before a flight.'),
  t('prior_condition', 'E.7 Prior condition', 'Action limit', 'direct_judge',
    'Constraint stating that when a specific condition is met, the response must follow a particular process.',
    'If the user requests legal advice, begin with a disclaimer.'),
  t('mention', 'F.1 Mention', 'Keyword', 'rule_and_direct_judge',
    'Constraint that requires including a specific keyword a certain number of times.',
    "Mention 'GreenTech' exactly three times throughout."),
  t('not_mention', 'F.2 Not mention', 'Keyword', 'rule_and_direct_judge',
    'Constraint that requires avoiding specific keywords or phrases.',
    "Do not mention the words 'budget' or 'investment'."),
  t('multiple_mention', 'F.3 Multiple mention', 'Keyword', 'rule_and_direct_judge',
    'Constraint requiring including multiple specified keywords in a balanced manner.',
    "Mention both 'sustainability' and 'renewable energy' at least twice."),
  t('keyword_variation', 'F.4 Keyword variation', 'Keyword', 'direct_judge',
    'Constraint requiring the use of synonyms or variations of a given keyword.',
    "Use at least three synonyms for 'innovation' throughout your text."),
];

export const CONSTRAINT_KEYS: readonly string[] = CONSTRAINT_TYPES.map((c) => c.key);

const BY_KEY = new Map(CONSTRAINT_TYPES.map((c) => [c.key, c]));

export function constraintType(key: string): ConstraintType | undefined {
  return BY_KEY.get(key);
}
